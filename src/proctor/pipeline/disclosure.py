"""The one disclosure policy: turn what a stage saw into what the participant may see.

Every stage produces a ``StageResult`` holding everything it knows (the failed case's logs
included); :func:`disclose` is the only way from there to the ``StageReport`` a participant
reads, by the stage's :class:`proctor.types.Disclosure` level:

- ``full``: the headline and the failed run's log tails;
- ``errors``: the headline only (one line, no entry output);
- ``counts``: the counts message instead of a failed case's headline;
- ``none``: only whether the stage passed (``quiet``), with case counts zeroed but the total.

On hidden data (the exam and its rerun) the message at ``errors`` and below is a fixed text
chosen by Proctor (``safe_headline``, else ``quiet``): never a figure or a line an entry can
write (its exit status, a harness line it printed), which would carry hidden data out.

At ``counts`` and ``none``, the exam's (and the rerun's) wall time and resource usage are not
shown either, nor the score stage's: an entry can encode hidden data in its peak memory or its
timing, and the score stage's time depends on the exam's outputs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from proctor.entries import unwrapped_note
from proctor.entries.litter import describe_ignored
from proctor.pipeline.report import CaseCounts, StageReport, Usage
from proctor.protocols.base import CaseRun
from proctor.types import Disclosure, Failure, Stage, StageStatus

TAIL_CHARS = 4000
HIDDEN_STAGES = frozenset({Stage.EXAM, Stage.RERUN})
"""The stages where entry code runs on hidden data."""
HIDDEN_DATA_STAGES = frozenset({*HIDDEN_STAGES, Stage.SCORE})
"""The stages that read hidden data (inputs or references): a submission counts from the first."""


def prep_notes(
    *, made_executable: Sequence[str] = (), ignored: Sequence[str] = (), unwrapped: str = ""
) -> str:
    """What the platform changed in the upload, as clauses for the prep message ("" if none).

    ``unwrapped``: the archive's single top-level folder taken as the entry's root.
    """
    notes = f"; {unwrapped_note(unwrapped)}" if unwrapped else ""
    if made_executable:
        notes += f"; made executable: {', '.join(made_executable)}"
    if ignored:
        notes += f"; {describe_ignored(tuple(ignored))}"
    return notes


@dataclass(frozen=True, slots=True)
class StageResult:
    """Everything a stage found, before disclosure (never shown to a participant as is).

    ``headline``: one line without entry output; ``logs``: (name, text) pairs of the failed
    run; ``quiet``: the message at ``none``; ``counts_replace_headline``: at ``counts``, show
    the counts message rather than the headline (a failed case's headline names the case);
    ``safe_headline``: the headline in Proctor's words only (case names, counts, fixed
    phrases), what a hidden stage shows at ``errors`` and ``counts`` (``quiet`` when None).
    ``show_logs``: ``logs`` show at ``full`` even though the stage passed (the one run of a
    protocol whose prints are its diagnostics). ``failed_run``: the first failed case of a
    stage that went on (organizer side; the score stage words an entry failure from it).
    """

    stage: Stage
    status: StageStatus
    headline: str
    quiet: str
    counts: CaseCounts = field(default_factory=CaseCounts)
    usage: Usage = field(default_factory=Usage)
    logs: tuple[tuple[str, str], ...] = ()
    counts_replace_headline: bool = False
    failure: Failure | None = None
    wall_s: float = 0.0
    safe_headline: str | None = None
    show_logs: bool = False
    failed_run: CaseRun | None = None

    @property
    def failed(self) -> bool:
        """True when the stage failed."""
        return self.status is StageStatus.FAILED


def counts_of(runs: Sequence[CaseRun], not_started: int = 0) -> CaseCounts:
    """Count passed, failed and timed-out cases (cases never started count as failed)."""
    passed = sum(1 for run in runs if run.ok)
    timed_out = sum(1 for run in runs if run.timed_out)
    failed = len(runs) - passed + not_started
    return CaseCounts(len(runs) + not_started, passed, failed, timed_out)


def counts_message(stage: Stage, counts: CaseCounts) -> str:
    """A message carrying nothing beyond counts (``1 case``, ``3 cases``)."""
    noun = "case" if counts.total == 1 else "cases"
    return (
        f"{stage}: {counts.total} {noun}, {counts.passed} passed, {counts.failed} failed "
        f"({counts.timed_out} timed out)"
    )


def fixed_problem(run: CaseRun) -> str:
    """What went wrong with a case, in one of a few fixed phrases (nothing the entry wrote)."""
    outcome = run.outcome
    if outcome.timed_out:
        return "timed out"
    if outcome.memory_exceeded:
        return "ran out of memory"
    if outcome.output_exceeded:
        return "wrote more output than allowed"
    if outcome.succeeded:
        return "gave no usable output"
    return "failed"


def failed_code_message(words: str, run: CaseRun, level: Disclosure) -> str:
    """Why nothing could be scored after ``run`` (a hidden case) failed, as ``level`` allows.

    ``words`` say whose code failed where (the protocol's); the reason is the run's problem
    at ``full``, a fixed phrase at ``errors``, nothing below.
    """
    if level is Disclosure.FULL:
        reason = f": {run.problem or run.outcome.describe()}"
    elif level is Disclosure.ERRORS:
        reason = f": {fixed_problem(run)}"
    else:
        reason = ""
    return f"{words}{reason}; nothing it wrote could be scored"


def run_logs(stdout: str, stderr: str) -> tuple[tuple[str, str], ...]:
    """The non-empty logs of a run, for ``full`` disclosure."""
    return tuple((name, text) for name, text in (("stdout", stdout), ("stderr", stderr)) if text)


def disclose(
    result: StageResult,
    level: Disclosure,
    *,
    task: str | None = None,
    exam_figures_hidden: bool = False,
) -> StageReport:
    """The participant's view of ``result`` at disclosure ``level``.

    ``exam_figures_hidden`` (the exam is disclosed at ``counts`` or ``none``): no figure of any
    stage on hidden data shows, the score stage's time included (the exam's outputs steer it).
    """
    counts = result.counts
    if level is Disclosure.NONE:
        message = result.quiet
        counts = dataclasses.replace(counts, passed=0, failed=0, timed_out=0)
    elif level is Disclosure.COUNTS and result.counts_replace_headline:
        message = counts_message(result.stage, counts)
    elif level is Disclosure.FULL:
        parts = [result.headline]
        for name, text in result.logs if result.failed or result.show_logs else ():
            if text.strip():
                tail = text[-TAIL_CHARS:]
                parts.append(f"--- {name} (last {TAIL_CHARS} characters) ---\n{tail}")
        message = "\n".join(parts)
    elif result.stage in HIDDEN_STAGES:
        message = result.safe_headline if result.safe_headline is not None else result.quiet
    else:
        message = result.headline
    # usage shows the stage's own wall time: cases running in parallel must not add up
    wall_s, usage = result.wall_s, dataclasses.replace(result.usage, wall_s=result.wall_s)
    hidden_runs = result.stage in HIDDEN_STAGES and level in (Disclosure.COUNTS, Disclosure.NONE)
    hidden = hidden_runs or (exam_figures_hidden and result.stage in HIDDEN_DATA_STAGES)
    if hidden:
        wall_s, usage = 0.0, Usage()  # a figure of hidden runs can carry hidden data
    return StageReport(
        result.stage, result.status, message, wall_s, counts, usage, task, figures_hidden=hidden
    )
