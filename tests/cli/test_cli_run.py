"""The ``proctor run``/``kit``/``challenges`` commands as a participant uses them (subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from proctor_cli import PROCTOR, proctor
from toy_challenge import make_challenge, make_entry

EXAM_KEYS = {"name", "status", "message", "wall_s", "cases"}


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


def _digests(folder: Path) -> set[str]:
    import hashlib

    return {hashlib.sha256(f.read_bytes()).hexdigest() for f in folder.rglob("*") if f.is_file()}


def _bundled_names() -> list[str]:
    from proctor.services.local.catalog import bundled_challenges

    return [challenge.name for challenge in bundled_challenges()]


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("name", _bundled_names())
def test_every_kit_runs_with_the_command_its_readme_gives(shared_dir: Path, name: str) -> None:
    from proctor.services.local.catalog import resolve_challenge

    kit = shared_dir / f"kit-{name}"
    made = proctor("kit", name, str(kit), work_root=shared_dir)
    assert made.returncode == 0, made.stderr
    command = f"proctor run entry --challenge {name}"
    assert command in (kit / "README.md").read_text(encoding="utf-8")
    tasks = resolve_challenge(name).tasks
    hidden = set().union(*(_digests(task.hidden_references) for task in tasks))
    # a reference folder may repeat the inputs (eHealth-KD's sentences): those are not secret
    inputs = set().union(*(_digests(t.public_inputs) for t in tasks if t.public_inputs))
    inputs |= set().union(*(_digests(t.hidden_inputs) for t in tasks if t.hidden_inputs))
    assert not (hidden - inputs) & _digests(kit), "the kit carries a hidden reference"
    env = {**os.environ, "PROCTOR_WORK_ROOT": str(shared_dir)}
    done = subprocess.run(
        [str(PROCTOR), *command.split()[1:], "--json"],
        cwd=kit, capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
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
def test_the_demo_ranks_the_baseline_first_on_every_bundled_challenge(shared_dir: Path) -> None:
    from proctor.services.local.catalog import bundled_challenges

    done = proctor("demo", "--json", work_root=shared_dir)
    assert done.returncode == 0, done.stderr[-2000:]
    shown = {item["challenge"]: item for item in json.loads(done.stdout)["challenges"]}
    assert set(shown) == {challenge.name for challenge in bundled_challenges()}
    for name, item in shown.items():
        assert all(e["report"]["status"] == "scored" for e in item["entries"]), name
        board = item["leaderboard"]
        assert board[0]["entry"] == "baseline", (name, board)
        assert board[0]["rank"] < board[1]["rank"], (name, board)


def test_challenges_and_kit_answer_in_json(shared_dir: Path) -> None:
    listed = proctor("challenges", "--json", work_root=shared_dir)
    assert listed.returncode == 0, listed.stderr
    names = [row["name"] for row in json.loads(listed.stdout)["challenges"]]
    assert "physionet2018" in names and "visceral-anatomy3" in names
    kit = shared_dir / "json-kit"
    made = proctor("kit", "physionet2017", str(kit), "--json", work_root=shared_dir)
    assert made.returncode == 0, made.stderr
    written = json.loads(made.stdout)
    assert written["kit"] == str(kit)
    assert str(kit / "entry") in written["written"]


# SIGINT with its default action, as in a terminal: a suite started in the background by a
# shell without job control runs with SIGINT ignored, which every process it starts inherits
# across exec (and `proctor run` then rightly ignores Ctrl-C, as under nohup).
AS_IN_A_TERMINAL = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


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
        [
            sys.executable,
            "-c",
            AS_IN_A_TERMINAL,
            str(PROCTOR),
            "run",
            str(entry),
            "-c",
            str(challenge),
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    deadline = time.monotonic() + 120  # a loaded machine takes long to reach the exam
    while time.monotonic() < deadline and not list(runs.glob("toy-*/outputs")):
        assert process.poll() is None, process.communicate()
        time.sleep(0.1)  # the exam has begun once its outputs folder exists
    assert list(runs.glob("toy-*/outputs")), "the exam never began"
    process.send_signal(signal.SIGINT)
    interrupted_at = time.monotonic()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    # the running cases (sleep 25) are killed, not waited for
    assert time.monotonic() - interrupted_at < 15
    assert list(runs.glob("toy-*")) == []
    assert str(runs) not in Path("/proc/self/mounts").read_text()
