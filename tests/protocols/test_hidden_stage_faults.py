"""After a hidden stage started: whose fault a failure is, and what its message may carry.

The ``python_model`` harness's "data could not be loaded" status (4) is the platform's fault only
before the budget clock started: once the clock ran, the entry's code had run on the hidden
dataset and could exit with that status itself (a free submission at will). At disclosure
``errors`` and below, the message of a hidden stage is a fixed text chosen by Proctor, never text
an entry can write (its harness line, its exit status). Played with the scripted ``FakeSandbox``
(the harness's two runs per dataset), every protocol's exam through the same disclosure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from autowsl_toy import GOOD_MODEL
from autowsl_toy import make_challenge as make_model_challenge
from autowsl_toy import make_entry as make_model_entry
from pipeline_fakes import ScriptedEntry, evaluate
from toy_challenge import make_challenge, make_entry

from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.report import EvaluationReport, Usage
from proctor.pipeline.submission import Submission, evaluate_submission
from proctor.protocols.model_runs import DATA_STATUS, PROBLEM_STATUS
from proctor.protocols.model_runs import test_rows as rows_of
from proctor.resolve import load_challenge
from proctor.sandbox.base import Outcome
from proctor.sandbox.fake import FakeRequest, FakeSandbox
from proctor.store.runfolder import RunFolder
from proctor.types import Failure, RunStatus, Stage

HIDDEN_ROW = "0.123456789,SECRET-ROW-" + "x" * 40
LEAK = "proctor-harness: " + HIDDEN_ROW * 60  # ~3 KB of "hidden data" on the harness's line


def _harness(bad_dataset: str, *, status: int, clock_started: bool) -> FakeSandbox:
    """Plays the harness: ``train`` on ``bad_dataset`` exits ``status`` with ``LEAK``."""

    def handler(request: FakeRequest) -> Outcome:
        argv = list(request.argv)
        mode = argv[3]
        data = request.host_path(argv[argv.index("--data") + 1])
        clock = 0.1 if clock_started else None
        if mode == "train" and data.name == bad_dataset:
            return Outcome(exit_status=status, wall_s=1.0, stderr=LEAK, clock_started_s=clock)
        if mode == "predict":
            output = request.host_path(argv[argv.index("--output") + 1])
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text("label\n" + "0.5\n" * rows_of(data))
        return Outcome(exit_status=0, wall_s=0.5, clock_started_s=0.1)

    return FakeSandbox(handler)


def _evaluate_model(tmp_path: Path, sandbox: FakeSandbox, exam: str) -> EvaluationReport:
    root = make_model_challenge(tmp_path / "challenge")
    spec = yaml.safe_load((root / "challenge.yaml").read_text())
    spec["disclosure"] = {"exam": exam}
    del spec["environment"]  # the fake sandbox plays the harness on the host's files
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    challenge = load_challenge(root)
    entry = make_model_entry(tmp_path / "entry", GOOD_MODEL)
    folder = RunFolder.create(tmp_path / "runs", challenge.name)
    submission = Submission(challenge, challenge.phase(None), entry, folder, cancel=CancelToken())
    return evaluate_submission(submission, sandbox)


def test_the_harness_data_status_after_the_clock_started_is_the_entrys_failure(
    tmp_path: Path,
) -> None:
    report = _evaluate_model(
        tmp_path, _harness("b", status=DATA_STATUS, clock_started=True), "errors"
    )
    assert report.tasks["a"].status is RunStatus.SCORED
    failed = report.tasks["b"]
    assert (failed.status, failed.failure) == (RunStatus.FAILED, Failure.ENTRY)


def test_the_harness_data_status_before_the_clock_started_stays_the_platforms(
    tmp_path: Path,
) -> None:
    report = _evaluate_model(
        tmp_path, _harness("b", status=DATA_STATUS, clock_started=False), "errors"
    )
    assert report.tasks["b"].failure is Failure.PLATFORM


@pytest.mark.parametrize("exam", ["errors", "counts", "none"])
@pytest.mark.parametrize("status", [PROBLEM_STATUS, DATA_STATUS, 77])
def test_no_entry_text_reaches_a_hidden_stage_message_at_errors_and_below(
    tmp_path: Path, exam: str, status: int
) -> None:
    report = _evaluate_model(tmp_path, _harness("b", status=status, clock_started=True), exam)
    assert "SECRET-ROW" not in str(report.to_json())
    messages = " | ".join([report.message, *(stage.message for stage in report.stages)])
    assert "77" not in messages  # the exit status an entry chose is a figure it wrote
    assert report.tasks["b"].failure is Failure.ENTRY


def test_no_stage_on_hidden_data_shows_its_duration_when_the_exam_hides_figures(
    tmp_path: Path,
) -> None:
    """The score stage's time depends on the exam's outputs: an entry can steer it."""
    challenge = make_challenge(tmp_path / "toy")  # exam disclosed at counts
    report = evaluate(challenge, make_entry(tmp_path / "entry"), ScriptedEntry())
    assert report.status is RunStatus.SCORED
    for shown in report.stages:
        if shown.stage in (Stage.EXAM, Stage.RERUN, Stage.SCORE):
            assert (shown.wall_s, shown.usage) == (0.0, Usage()), shown
