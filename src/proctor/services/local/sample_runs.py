"""Run a challenge's own samples through the real pipeline once (``challenge check``).

The samples are ``baseline/`` and each folder of ``kit/solutions/`` (an imported bundle's
solutions and sample submissions land there). Each is evaluated as ``proctor run SAMPLE
--challenge DIR`` evaluates it (the default phase, the real sandbox, environments built when
the store lacks them) and a failure becomes one problem naming whose program failed: the
organizer's (scoring or ingestion program, failure ``scorer``: the reason from
``score-error.txt``), the sample's own code (failure ``entry``) or the platform. "Ready" then
means the organizer's programs ran on every sample.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from proctor import trees
from proctor.errors import ProctorError
from proctor.pipeline.report import EvaluationReport
from proctor.pipeline.score import ORGANIZER_FAULT
from proctor.services.local.environments import BuildListener
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.services.local.program_compile import sample_folders
from proctor.settings import Settings
from proctor.spec import Challenge
from proctor.types import Failure, RunStatus

REASON_LINES = 4
"""How many last lines of each organizer's log (``score-error.txt``, ``scoring-TASK.log``) a
problem quotes."""


class SampleListener(BuildListener, Protocol):
    """Told which sample is running and how environment builds go (they may take minutes)."""

    def sample_started(self, name: str, index: int, total: int) -> None:
        """Sample ``name`` (``index`` of ``total``, from 1) starts."""


@dataclass(frozen=True, slots=True)
class SampleFailure:
    """A sample whose run failed: the sample (relative to the challenge) and why."""

    sample: str
    message: str


Runner = Callable[[RunRequest, Settings, BuildListener | None], EvaluationReport]


def _run_entry(
    request: RunRequest, settings: Settings, builds: BuildListener | None
) -> EvaluationReport:
    """``proctor run``'s use case, without a progress display."""
    return run_entry(request, settings, builds=builds)


def run_samples(
    challenge: Challenge,
    settings: Settings,
    listener: SampleListener | None = None,
    runner: Runner = _run_entry,
) -> list[SampleFailure]:
    """Evaluate every sample of ``challenge`` once; the failed ones, each with whose fault."""
    samples = sample_folders(challenge.root)
    failures = []
    for index, sample in enumerate(samples, start=1):
        name = sample.relative_to(challenge.root).as_posix()
        if listener is not None:
            listener.sample_started(name, index, len(samples))
        request = RunRequest(sample, str(challenge.root), keep=True)
        try:
            report = runner(request, settings, listener)
        except ProctorError as err:
            failures.append(SampleFailure(name, f"could not run: {err}"))
            continue
        try:
            problem = _problem(report)
        finally:
            if report.run_dir is not None:
                trees.remove_tree_quietly(report.run_dir)
        if problem is not None:
            failures.append(SampleFailure(name, problem))
    return failures


def _problem(report: EvaluationReport) -> str | None:
    """Why the sample's run is a problem (whose program failed), or None when it ran.

    A scored sample is one too when the organizer's ingestion program failed before the
    sample's code ran (the upload was scored as uploaded, as Codabench scores a result zip).
    """
    if report.status is not RunStatus.FAILED:
        failed = _organizer_failures(report.run_dir)
        if not failed:
            return None
        return (
            f"scored as uploaded, but the organizer's program failed before the sample's code "
            f"ran: {failed}: fix the program (its log: scoring-TASK.log)"
        )
    stage = report.failed_stage or "a stage"
    if report.failure is Failure.SCORER:
        reason = _organizer_reason(report.run_dir)
        return (
            f"the organizer's program (scoring or ingestion) failed on this sample at {stage}: "
            f"{reason or report.message}: fix the program (the whole log: proctor run SAMPLE "
            "--challenge DIR --keep, then score-error.txt and scoring-TASK.log)"
        )
    if report.failure is Failure.PLATFORM:
        faults = "; ".join(report.platform_faults) or report.message
        return f"the platform failed running this sample at {stage}: {faults}"
    return (
        f"the sample's own code failed at {stage} (failure entry): {report.message}: fix the "
        "sample, or the programs if the sample is right"
    )


def _organizer_reason(run_dir: Path | None) -> str:
    """The organizer's ``score-error.txt`` in ``run_dir`` and its scoring logs' last lines."""
    if run_dir is None:
        return ""
    found = []
    for log in (run_dir / "score-error.txt", *sorted(run_dir.glob("scoring-*.log"))):
        if log.is_file():
            text = log.read_text(encoding="utf-8", errors="replace")
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            found.append(" | ".join(lines[-REASON_LINES:]))
    return "; ".join(found)


def _organizer_failures(run_dir: Path | None) -> str:
    """The organizer's-program failures noted in ``run_dir``'s scoring logs (empty: none)."""
    if run_dir is None:
        return ""
    found = []
    for log in sorted(run_dir.glob("scoring-*.log")):
        text = log.read_text(encoding="utf-8", errors="replace")
        found += [line.strip() for line in text.splitlines() if line.startswith(ORGANIZER_FAULT)]
    return "; ".join(line.removeprefix(ORGANIZER_FAULT + ": ") for line in found)
