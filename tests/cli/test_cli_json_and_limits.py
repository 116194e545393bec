"""Hardening item 18: --json errors, --jobs 0, whole-number counts, entry_files, --keep."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from proctor_cli import proctor
from toy_challenge import make_challenge, make_entry
from typer.testing import CliRunner

from proctor.cli.main import build_app


@pytest.mark.parametrize(
    ("args", "kind", "status"),
    [
        (["run", "--json"], "usage", 2),
        (["run", "nowhere", "-c", "physionet2018", "--json"], "usage", 2),
        (["run", ".", "-c", "no-such-challenge", "--json"], "usage", 2),
        (["score", "auc", "nope.solution", "nope.csv", "--json"], "input", 2),
        (["env", "build", "no-such-challenge", "--json"], "usage", 2),
    ],
)
def test_json_errors_are_one_object_on_stdout(args: list[str], kind: str, status: int) -> None:
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == status
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == kind and error["exit_status"] == status and error["message"]


@pytest.mark.sandbox
@pytest.mark.slow
def test_jobs_zero_means_one_per_core_and_counts_are_whole_numbers(
    tmp_path: Path, shared_dir: Path
) -> None:
    challenge = make_challenge(tmp_path / "challenge")
    entry = make_entry(tmp_path / "entry")
    done = proctor("run", str(entry), "-c", str(challenge), "--json", "--jobs", "0",
                   work_root=shared_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    scores = json.loads(done.stdout)["scores"]["arousal"]
    assert scores["records"] == 3 and isinstance(scores["records"], int)
    assert isinstance(scores["records_zero_filled"], int)


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_entry_file_cap_is_a_challenge_limit(tmp_path: Path, shared_dir: Path) -> None:
    challenge = make_challenge(tmp_path / "challenge")
    data = yaml.safe_load((challenge / "challenge.yaml").read_text())
    data["limits"]["entry_files"] = 3
    (challenge / "challenge.yaml").write_text(yaml.safe_dump(data))
    entry = make_entry(tmp_path / "entry")
    done = proctor("run", str(entry), "-c", str(challenge), "--json", work_root=shared_dir)
    report = json.loads(done.stdout)
    assert report["failed_stage"] == "prep"
    assert "over 3 files and folders" in report["stages"][0]["message"]


@pytest.mark.sandbox
@pytest.mark.slow
def test_keep_keeps_the_home_and_the_setup_output(tmp_path: Path, shared_dir: Path) -> None:
    challenge = make_challenge(tmp_path / "challenge")
    setup = "#!/bin/sh\necho from-setup\necho state > state.txt\n"
    entry = make_entry(tmp_path / "entry", setup_sh=setup)
    done = proctor("run", str(entry), "-c", str(challenge), "--json", "--keep",
                   work_root=shared_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    kept = Path(done.stderr.split("run folder kept: ")[1].split()[0])
    assert (kept / "homes-kept" / "arousal" / "state.txt").read_text() == "state\n"
    log = [json.loads(line) for line in (kept / "cases.jsonl").read_text().splitlines()]
    prep = next(line for line in log if line["stage"] == "prep")
    assert "from-setup" in prep["stdout_tail"]
