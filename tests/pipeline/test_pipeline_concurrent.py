"""Two evaluations at once in one process, in the real sandbox: cancelling one spares the other."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from toy_challenge import make_challenge, make_exam_entry

from proctor.errors import JobCancelledError
from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.progress import StageKey
from proctor.pipeline.report import EvaluationReport, StageReport
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import RunStatus, Stage

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


class ExamStarted:
    """A progress listener that signals when the exam starts."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def stage_started(self, key: StageKey, total_cases: int) -> None:
        if key.stage is Stage.EXAM:
            self.event.set()

    def case_finished(self, key: StageKey, ok: bool) -> None:
        pass

    def stage_step(self, key: StageKey, done: int, total: int, text: str) -> None:
        pass

    def stage_finished(self, report: StageReport) -> None:
        pass


def test_cancelling_one_evaluation_leaves_the_others_cases_running_and_scored(
    tmp_path: Path, shared_dir: Path
) -> None:
    settings = Settings(work_root=shared_dir / "runs")
    challenge = make_challenge(tmp_path / "challenge", case_s=60, stage_s=120)
    slow = make_exam_entry(tmp_path / "slow", "  te*) sleep 50; exec ./good.sh $1 ;;")
    steady = make_exam_entry(tmp_path / "steady", "  te*) sleep 2; exec ./good.sh $1 ;;")
    token, started = CancelToken(), ExamStarted()
    outcome: dict[str, Any] = {}

    def evaluate(name: str, entry: Path, **extra: Any) -> None:
        try:
            outcome[name] = run_entry(RunRequest(entry, str(challenge), jobs=3), settings, **extra)
        except BaseException as err:
            outcome[name] = err

    threads = [
        threading.Thread(target=evaluate, args=("slow", slow), kwargs={"cancel": token,
                                                                     "progress": started}),
        threading.Thread(target=evaluate, args=("steady", steady)),
    ]  # fmt: skip
    for thread in threads:
        thread.start()
    assert started.event.wait(60), "the slow entry never reached its exam"
    cancelled_at = time.monotonic()
    token.cancel()
    threads[0].join(30)
    assert isinstance(outcome["slow"], JobCancelledError)
    assert time.monotonic() - cancelled_at < 10  # its 50 s cases were killed, not waited for
    threads[1].join(120)
    steady_report = outcome["steady"]
    assert isinstance(steady_report, EvaluationReport), steady_report
    assert steady_report.status is RunStatus.SCORED, steady_report.to_json()
    exam = next(s for s in steady_report.stages if s.stage is Stage.EXAM)
    assert exam.cases.passed == 3
