"""The physionet_model protocol: the challenge's scripts drive an entry's team_code.py.

Entries are the bundled baseline (laid out as python-example-2026) with one change each, run
through ``run_entry`` in the real sandbox and the physionet2026 environment.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from proctor.challenges.physionet2026 import BASELINE_DIR, CHALLENGE_DIR
from proctor.environments.store import BuiltEnvironment
from proctor.errors import ConfigError
from proctor.pipeline.report import EvaluationReport, StageReport
from proctor.resolve import load_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import Failure, RunStatus, Stage, StageStatus


def sandboxed(test: object) -> object:
    """A test run in the real sandbox, in the physionet2026 environment."""
    for mark in (pytest.mark.sandbox, pytest.mark.slow, pytest.mark.environment):
        test = mark(test)
    return test


FIRST_HIDDEN = "sub-S0001102000"  # the first session of data/hidden/test/demographics.csv


def baseline(folder: Path, **files: str) -> Path:
    """A copy of the baseline entry with ``files`` (name: text) written over it."""
    shutil.copytree(BASELINE_DIR, folder)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def run(entry: Path, shared_dir: Path) -> EvaluationReport:
    return run_entry(RunRequest(entry, "physionet2026"), Settings(work_root=shared_dir / "runs"))


def stage(report: EvaluationReport, name: Stage) -> StageReport:
    return next(s for s in report.stages if s.stage is name)


OWN_SCRIPTS = {
    # the entry's own copies of the challenge's scripts: each would break the run if it ran
    "train_model.py": "raise SystemExit('the entry s own train_model.py ran')\n",
    "run_model.py": "raise SystemExit('the entry s own run_model.py ran')\n",
    "helper_code.py": "raise ImportError('the entry s own helper_code.py was imported')\n",
}

LEAVES_STATE = """
import os

_train = train_model
_load = load_model


def train_model(data_folder, model_folder, verbose):
    _train(data_folder, model_folder, verbose)
    with open("left-by-training.txt", "w") as handle:  # in the working folder, not model/
        handle.write("state\\n")
    with open(os.path.join(model_folder, "kept.txt"), "w") as handle:
        handle.write("model\\n")


def load_model(model_folder, verbose):
    if not os.path.isfile("Dockerfile"):
        raise RuntimeError("the entry's Dockerfile is not kept as a file")
    if os.path.exists("left-by-training.txt"):
        raise RuntimeError("training's scratch file was carried forward")
    if not os.path.exists(os.path.join(model_folder, "kept.txt")):
        raise RuntimeError("the model folder was not carried forward")
    return _load(model_folder, verbose)
"""


@sandboxed
def test_the_challenge_s_scripts_run_and_only_model_is_carried_forward(
    shared_dir: Path, physionet2026_env: BuiltEnvironment
) -> None:
    team_code = (BASELINE_DIR / "team_code.py").read_text() + LEAVES_STATE
    entry = baseline(shared_dir / "entry", **OWN_SCRIPTS, **{"team_code.py": team_code})
    report = run(entry, shared_dir)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert all(s.status is StageStatus.PASSED for s in report.stages), report.to_json()
    assert report.scores["test"]["sessions_without_output"] == 0
    assert (entry / "train_model.py").read_text() == OWN_SCRIPTS["train_model.py"]  # untouched


CRASHES_ON_ONE = f'''
_run = run_model


def run_model(model, record, data_folder, verbose):
    if record["BidsFolder"] == "{FIRST_HIDDEN}":
        raise RuntimeError("this session breaks the model")
    return _run(model, record, data_folder, verbose)
'''


@sandboxed
def test_a_session_that_crashes_gets_no_output_and_the_others_are_scored(
    shared_dir: Path, physionet2026_env: BuiltEnvironment
) -> None:
    team_code = (BASELINE_DIR / "team_code.py").read_text() + CRASHES_ON_ONE
    report = run(baseline(shared_dir / "entry", **{"team_code.py": team_code}), shared_dir)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert stage(report, Stage.EXAM).status is StageStatus.PASSED
    scores = report.scores["test"]
    assert scores["sessions"] == 16 and scores["sessions_without_output"] == 1


@sandboxed
def test_training_that_saves_no_model_fails_prep_as_the_entry_s_fault(
    shared_dir: Path, physionet2026_env: BuiltEnvironment
) -> None:
    team_code = (
        (CHALLENGE_DIR / "trivial" / "team_code.py")
        .read_text()
        .replace(
            "    os.makedirs(model_folder, exist_ok=True)\n",
            "    os.rmdir(model_folder)\n    return\n",
        )
    )
    report = run(baseline(shared_dir / "entry", **{"team_code.py": team_code}), shared_dir)
    assert report.status is RunStatus.FAILED and report.failure is Failure.ENTRY
    assert report.failed_stage == Stage.PREP
    assert "left no model/ folder" in stage(report, Stage.PREP).message


def test_a_scripts_folder_outside_the_challenge_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "challenge"
    shutil.copytree(CHALLENGE_DIR, folder, ignore=shutil.ignore_patterns("data"))
    text = (folder / "challenge.yaml").read_text()
    (folder / "challenge.yaml").write_text(
        text.replace("scripts: scripts", "scripts: ../elsewhere")
    )
    with pytest.raises(ConfigError, match="scripts"):
        load_challenge(folder)


MODEL_LINKED_OUT = """
import os


def train_model(data_folder, model_folder, verbose):
    os.rmdir(model_folder)
    os.symlink("/etc", model_folder)  # the host's /etc, were the host to follow it


def load_model(model_folder, verbose):
    return None


def run_model(model, record, data_folder, verbose):
    return 0, 0.5
"""


@sandboxed
def test_a_model_folder_that_is_a_link_fails_prep_and_is_never_followed(
    shared_dir: Path, physionet2026_env: BuiltEnvironment
) -> None:
    report = run(baseline(shared_dir / "entry", **{"team_code.py": MODEL_LINKED_OUT}), shared_dir)
    assert report.status is RunStatus.FAILED and report.failure is Failure.ENTRY
    assert "left no model/ folder" in stage(report, Stage.PREP).message


EXITS_MID_RUN = """
_run = run_model


def run_model(model, record, data_folder, verbose):
    os._exit(9)  # past any try/except: run_model.py itself dies
"""


@sandboxed
def test_a_run_that_dies_is_a_failed_case_and_every_session_scores_as_missing(
    shared_dir: Path, physionet2026_env: BuiltEnvironment
) -> None:
    team_code = (BASELINE_DIR / "team_code.py").read_text() + EXITS_MID_RUN
    entry = baseline(shared_dir / "entry", **{"team_code.py": team_code})
    challenge = shared_dir / "challenge"
    shutil.copytree(CHALLENGE_DIR, challenge, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.rmtree(challenge / "data" / "public" / "supplementary")  # no quiz case: on to the exam
    report = run_entry(RunRequest(entry, str(challenge)), Settings(work_root=shared_dir / "runs"))
    assert stage(report, Stage.EXAM).cases.failed == 1, report.to_json()
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.scores["test"]["sessions_without_output"] == 16


@sandboxed
def test_training_past_its_limit_is_stopped_and_fails_prep(
    shared_dir: Path, physionet2026_env: BuiltEnvironment
) -> None:
    challenge = shared_dir / "challenge"
    shutil.copytree(CHALLENGE_DIR, challenge, ignore=shutil.ignore_patterns("__pycache__"))
    text = (challenge / "challenge.yaml").read_text()
    (challenge / "challenge.yaml").write_text(text.replace("train_s: 600", "train_s: 3"))
    slow = "\n\ndef train_model(data_folder, model_folder, verbose):\n    os.system('sleep 60')\n"
    entry = baseline(shared_dir / "entry")
    (entry / "team_code.py").write_text((entry / "team_code.py").read_text() + slow)
    report = run_entry(RunRequest(entry, str(challenge)), Settings(work_root=shared_dir / "runs"))
    assert report.status is RunStatus.FAILED and report.failure is Failure.ENTRY
    assert "ran out of its 3 s" in stage(report, Stage.PREP).message
