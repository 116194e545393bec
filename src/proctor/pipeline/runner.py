"""The stage runner: what happens around every stage, in one place.

Like a message broker's middleware, cross-cutting concerns are hooks around each stage rather
than branches inside it: progress events, the organizer's case log, timing and disclosure are
applied here for every stage of every protocol. A stage body only says what the stage found
(a ``StageResult``); the runner times it, discloses it by the phase's policy and tells the
hooks.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from proctor.pipeline.caselog import CaseLog
from proctor.pipeline.disclosure import StageResult, disclose
from proctor.pipeline.progress import ProgressListener, StageKey
from proctor.pipeline.report import EnvironmentInfo, StageReport
from proctor.protocols.base import CaseRun
from proctor.spec.model import DisclosureSpec
from proctor.types import Disclosure, Stage

CaseSink = Callable[[CaseRun], None]
StageBody = Callable[[CaseSink], StageResult]


class StageHook(Protocol):
    """Called around every stage; implementations must be thread-safe for ``after_case``."""

    def before_stage(self, key: StageKey, total_cases: int) -> None:
        """A stage starts with ``total_cases`` cases (0 for stages without cases)."""

    def after_case(self, key: StageKey, run: CaseRun) -> None:
        """One case of the stage ended (full information: organizer side)."""

    def on_step(self, key: StageKey, done: int, total: int, text: str) -> None:
        """A step of the stage's own work (``ProgressListener.stage_step``)."""

    def after_stage(self, key: StageKey, result: StageResult, report: StageReport) -> None:
        """The stage ended: ``result`` as found, ``report`` as disclosed."""


@dataclass(frozen=True, slots=True)
class ProgressHook:
    """Forwards stage and case events to a face's progress listener (disclosed view only)."""

    listener: ProgressListener

    def before_stage(self, key: StageKey, total_cases: int) -> None:
        """Start the stage's progress."""
        self.listener.stage_started(key, total_cases)

    def after_case(self, key: StageKey, run: CaseRun) -> None:
        """Advance the stage's progress."""
        self.listener.case_finished(key, run.ok)

    def on_step(self, key: StageKey, done: int, total: int, text: str) -> None:
        """Tell the stage's step."""
        self.listener.stage_step(key, done, total, text)

    def after_stage(self, key: StageKey, result: StageResult, report: StageReport) -> None:
        """Finish the stage's progress with its disclosed report."""
        self.listener.stage_finished(report)


@dataclass(frozen=True, slots=True)
class CaseLogHook:
    """Keeps the organizer's record of every case and stage in the run folder."""

    log: CaseLog

    def before_stage(self, key: StageKey, total_cases: int) -> None:
        """Nothing to record yet."""

    def after_case(self, key: StageKey, run: CaseRun) -> None:
        """Record the case with its resources and log tails."""
        self.log.record(key.task, key.stage, run)

    def on_step(self, key: StageKey, done: int, total: int, text: str) -> None:
        """Nothing to record: a build's steps are in its log."""

    def after_stage(self, key: StageKey, result: StageResult, report: StageReport) -> None:
        """Record the stage as found (before disclosure)."""
        self.log.record_stage(key.task, result)


def disclosure_level(policy: DisclosureSpec, stage: Stage) -> Disclosure:
    """The level a stage is disclosed at (the rerun of exam cases follows the exam's)."""
    if stage is Stage.RERUN:
        return policy.exam
    return Disclosure(getattr(policy, str(stage)))


class StageRunner:
    """Runs the stages of one task: timing, disclosure and hooks around each body."""

    def __init__(
        self,
        key_task: str,
        *,
        shown_task: str | None,
        policy: DisclosureSpec,
        hooks: Sequence[StageHook],
    ) -> None:
        self.task = key_task
        self.shown_task = shown_task
        self.policy = policy
        self.hooks = tuple(hooks)
        self.reports: list[StageReport] = []
        self.results: list[StageResult] = []
        self.current: Stage | None = None
        self.announced: Stage | None = None
        self.environment: EnvironmentInfo | None = None

    def begin(self, stage: Stage) -> None:
        """Announce ``stage`` (without cases) before its body runs, for work done ahead of it.

        Prep is announced before an entry's image is built; its ``run`` then announces
        nothing again (its report's time is still its body's).
        """
        key = StageKey(self.task, stage, self.shown_task)
        for hook in self.hooks:
            hook.before_stage(key, 0)
        self.current = self.announced = stage

    def step(self, stage: Stage, done: int, total: int, text: str) -> None:
        """Tell the hooks of a step of ``stage``'s own work (``done`` of ``total`` ended)."""
        key = StageKey(self.task, stage, self.shown_task)
        for hook in self.hooks:
            hook.on_step(key, done, total, text)

    def run(self, stage: Stage, body: StageBody, *, cases: int = 0) -> StageResult:
        """Run ``body`` as ``stage`` and return what it found.

        The disclosed report joins ``self.reports``.
        """
        key = StageKey(self.task, stage, self.shown_task)
        if self.announced is not stage or cases:
            for hook in self.hooks:
                hook.before_stage(key, cases)
        self.announced = None

        def case_done(run: CaseRun) -> None:
            for hook in self.hooks:
                hook.after_case(key, run)

        started = time.monotonic()
        self.current = stage
        result = body(case_done)
        result = dataclasses.replace(result, wall_s=time.monotonic() - started)
        self.finish(result)
        return result

    def finish(self, result: StageResult) -> StageReport:
        """Disclose ``result`` and tell the hooks (also for stages that never ran a body)."""
        key = StageKey(self.task, result.stage, self.shown_task)
        report = disclose(
            result,
            disclosure_level(self.policy, result.stage),
            task=self.shown_task,
            exam_figures_hidden=self.policy.exam_figures_hidden(),
        )
        self.reports.append(report)
        self.results.append(result)
        self.current = self.announced = None
        for hook in self.hooks:
            hook.after_stage(key, result, report)
        return report
