"""Prep announced ahead of its body, with its steps told (an entry image's build)."""

from __future__ import annotations

import threading
from pathlib import Path

from proctor.pipeline.disclosure import StageResult
from proctor.pipeline.image_build import LOCK_POLL_S, build_lock
from proctor.pipeline.progress import StageKey
from proctor.pipeline.report import StageReport
from proctor.pipeline.runner import CaseSink, ProgressHook, StageRunner
from proctor.spec.model import DisclosureSpec
from proctor.types import Stage, StageStatus


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[object, ...]] = []

    def stage_started(self, key: StageKey, total_cases: int) -> None:
        self.events.append(("started", key.label, total_cases))

    def case_finished(self, key: StageKey, ok: bool) -> None:
        self.events.append(("case", key.label, ok))

    def stage_step(self, key: StageKey, done: int, total: int, text: str) -> None:
        self.events.append(("step", key.label, done, total, text))

    def stage_finished(self, report: StageReport) -> None:
        self.events.append(("finished", report.label, str(report.status)))


def _passed(stage: Stage) -> StageResult:
    return StageResult(stage, StageStatus.PASSED, "done", "done")


def test_a_stage_begun_ahead_is_announced_once_and_its_steps_come_between() -> None:
    heard = Recorder()
    runner = StageRunner("t", shown_task=None, policy=DisclosureSpec(),
                         hooks=[ProgressHook(heard)])  # fmt: skip
    runner.begin(Stage.PREP)
    assert runner.current is Stage.PREP  # a platform fault in the build is prep's
    runner.step(Stage.PREP, 0, 1, "STEP 1/1: FROM python:3.10")
    runner.step(Stage.PREP, 1, 1, "image sha256:0123 built")

    def body(_: CaseSink) -> StageResult:
        return _passed(Stage.PREP)

    runner.run(Stage.PREP, body)
    runner.run(Stage.QUIZ, lambda _: _passed(Stage.QUIZ), cases=2)
    assert heard.events == [
        ("started", "prep", 0),
        ("step", "prep", 0, 1, "STEP 1/1: FROM python:3.10"),
        ("step", "prep", 1, 1, "image sha256:0123 built"),
        ("finished", "prep", "passed"),
        ("started", "quiz", 2),
        ("finished", "quiz", "passed"),
    ]
    assert [report.message for report in runner.reports] == ["done", "done"]


def test_a_stage_begun_and_failed_before_its_body_is_finished_once() -> None:
    heard = Recorder()
    runner = StageRunner("t", shown_task="t", policy=DisclosureSpec(),
                         hooks=[ProgressHook(heard)])  # fmt: skip
    runner.begin(Stage.PREP)
    runner.finish(StageResult(Stage.PREP, StageStatus.FAILED, "no", "no"))
    assert heard.events == [("started", "t:prep", 0), ("finished", "t:prep", "failed")]
    assert runner.current is None and runner.announced is None


def test_a_build_waiting_for_another_of_the_same_files_says_so_once(tmp_path: Path) -> None:
    key = "k" * 64
    waits: list[str] = []
    holder_in, holder_out = threading.Event(), threading.Event()

    def hold() -> None:
        with build_lock(tmp_path, key):
            holder_in.set()
            holder_out.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holder_in.wait(30)
    released = threading.Timer(3 * LOCK_POLL_S, holder_out.set)
    released.start()
    with build_lock(tmp_path, key, on_wait=lambda: waits.append("waiting")):
        assert holder_out.is_set()  # the lock came only once the other let it go
    holder.join(30)
    assert waits == ["waiting"]  # told once, however long the wait
    with build_lock(tmp_path, key, on_wait=lambda: waits.append("again")):
        pass
    assert waits == ["waiting"]  # a free lock: no wait to tell of
