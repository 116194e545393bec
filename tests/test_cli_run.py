"""The ``proctor run``/``kit``/``challenges`` commands as a participant uses them (subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toy_challenge import make_challenge, make_entry

PROCTOR = Path(sys.executable).parent / "proctor"
EXAM_KEYS = {"name", "status", "message", "wall_s", "cases"}


def proctor(*args: str, work_root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROCTOR_WORK_ROOT": str(work_root)}
    return subprocess.run(
        [str(PROCTOR), *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_bundled_baseline_scores_identically_twice(shared_dir: Path) -> None:
    runs = []
    for _ in range(2):
        done = proctor(
            "run",
            str(_baseline()),
            "--challenge",
            "physionet2018",
            "--json",
            work_root=shared_dir,
        )
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout))
    first, second = runs
    assert first["status"] == "scored"
    assert [(s["name"], s["status"]) for s in first["stages"]] == [
        (name, "passed") for name in ("prep", "quiz", "exam", "rerun", "score")
    ]
    assert first["determinism"] == {"arousal": {"rerun": 2, "identical": 2}}
    assert first["scores"] == second["scores"]
    assert 0.5 < first["scores"]["arousal"]["auprc"] <= 1
    exam = next(s for s in first["stages"] if s["name"] == "exam")
    assert set(exam) == EXAM_KEYS
    assert set(first) >= {"challenge", "phase", "status", "failed_stage", "message", "stages"}
    assert set(first["usage"]) == {"wall_s", "cpu_s", "peak_memory_bytes"}


def _baseline() -> Path:
    from proctor.challenges import bundled_root

    return bundled_root() / "physionet2018" / "baseline"


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_starting_kit_runs_as_is(shared_dir: Path) -> None:
    kit = shared_dir / "kit"
    made = proctor("kit", "physionet2018", str(kit), work_root=shared_dir)
    assert made.returncode == 0, made.stderr
    assert (kit / "entry" / "next.sh").is_file()
    assert (kit / "data" / "RECORDS").is_file()
    assert (kit / "README.md").is_file()
    assert not list(kit.rglob("*test*")), "the kit must not carry hidden data"
    done = proctor("run", str(kit / "entry"), "-c", "physionet2018", "--json", work_root=shared_dir)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "scored"


@pytest.mark.sandbox
def test_an_entry_failing_a_stage_exits_1_with_the_failed_stage(
    tmp_path: Path, shared_dir: Path
) -> None:
    challenge = make_challenge(tmp_path / "challenge")
    entry = make_entry(tmp_path / "entry", setup_sh="#!/bin/sh\nexit 3\n")
    done = proctor("run", str(entry), "-c", str(challenge), "--json", work_root=shared_dir)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["status"] == "failed"
    assert report["failed_stage"] == "prep"


def test_a_broken_challenge_file_exits_2_naming_file_and_key(
    tmp_path: Path, shared_dir: Path
) -> None:
    challenge = make_challenge(tmp_path / "challenge")
    text = (challenge / "challenge.yaml").read_text().replace("case_s:", "case_seconds:")
    (challenge / "challenge.yaml").write_text(text)
    entry = make_entry(tmp_path / "entry")
    done = proctor("run", str(entry), "-c", str(challenge), "--json", work_root=shared_dir)
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["kind"] == "config"  # --json: one error object
    assert str(challenge / "challenge.yaml") in done.stderr
    assert "protocol.case_seconds" in done.stderr


def test_an_unknown_challenge_name_exits_2_listing_the_bundled_ones(shared_dir: Path) -> None:
    done = proctor("run", str(shared_dir), "-c", "nosuch", work_root=shared_dir)
    assert done.returncode == 2
    assert "physionet2018" in done.stderr


def test_the_bundled_challenges_are_listed(shared_dir: Path) -> None:
    done = proctor("challenges", work_root=shared_dir)
    assert done.returncode == 0
    assert "physionet2018" in done.stdout


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_demo_scores_the_baseline_above_the_constant_entry(shared_dir: Path) -> None:
    done = proctor("demo", work_root=shared_dir)
    assert done.returncode == 0, done.stderr
    board = done.stdout[done.stdout.index("leaderboard · physionet2018 · auprc") :]
    lines = [line for line in board.splitlines() if "baseline" in line or "constant" in line]
    assert "baseline" in lines[0]
    assert "constant-0.5" in lines[1]


@pytest.mark.sandbox
@pytest.mark.slow
def test_ctrl_c_ends_the_run_at_once_with_130_leaving_no_run_folder_or_mount(
    tmp_path: Path, shared_dir: Path
) -> None:
    import signal
    import time

    from toy_challenge import make_exam_entry

    challenge = make_challenge(tmp_path / "challenge", case_s=30)
    entry = make_exam_entry(tmp_path / "entry", "  te*) sleep 25 ;;")
    runs = shared_dir / "runs"
    env = {**os.environ, "PROCTOR_WORK_ROOT": str(runs)}
    process = subprocess.Popen(
        [str(PROCTOR), "run", str(entry), "-c", str(challenge), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not list(runs.glob("toy-*/outputs")):
        time.sleep(0.1)  # the exam has begun once its outputs folder exists
    process.send_signal(signal.SIGINT)
    interrupted_at = time.monotonic()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    # the running cases (sleep 25) are killed, not waited for
    assert time.monotonic() - interrupted_at < 15
    assert list(runs.glob("toy-*")) == []
    assert str(runs) not in Path("/proc/self/mounts").read_text()
