"""The shared vocabulary of Proctor, at the bottom of the layers.

Enums every layer speaks: the stages of an evaluation, disclosure levels, whose fault a failed
run was, the states of a job and which way a metric improves. No extension is listed here:
each scorer, table metric and protocol driver is declared by its own module, in the one table
of its kind (``scoring.registry``, ``scoring.table_metrics``, ``protocols.registry``).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


class Stage(StrEnum):
    """The stages of one task's evaluation, in order (``rerun`` is the determinism check)."""

    PREP = "prep"
    QUIZ = "quiz"
    EXAM = "exam"
    RERUN = "rerun"
    SCORE = "score"


MAIN_STAGES = (Stage.PREP, Stage.QUIZ, Stage.EXAM, Stage.SCORE)
"""The stages every report lists (``rerun`` appears only when a phase asks for it)."""


class Disclosure(StrEnum):
    """What a participant sees of a stage.

    ``full`` diagnostics (log tails), ``errors`` only the error line, ``counts`` only counts of
    cases, failures and timeouts, ``none`` only whether the stage passed.
    """

    FULL = "full"
    ERRORS = "errors"
    COUNTS = "counts"
    NONE = "none"


class StageStatus(StrEnum):
    """The state a stage ends in."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


class RunStatus(StrEnum):
    """The state an evaluation (of one task, or of a whole submission) ends in."""

    SCORED = "scored"
    DRY_RUN = "dry_run"
    FAILED = "failed"


class Failure(StrEnum):
    """Whose fault a failed run was.

    ``entry``: the participant's (a bad archive, a failing script, a wrong answer);
    ``platform``: the host's (no mount, a full disk); ``scorer``: the organizer's programs (the
    scoring code, an ingestion program that failed before the entry's code ran) or the
    references; ``infrastructure``: the worker died or was lost (set by the service).
    """

    ENTRY = "entry"
    PLATFORM = "platform"
    SCORER = "scorer"
    INFRASTRUCTURE = "infrastructure"


class JobState(StrEnum):
    """The one state machine of a job (an entry on one task), shared by web and workers.

    ``queued`` → ``running`` (a worker holds its lease) → ``done`` (a result is committed);
    ``running`` → ``queued`` again when the lease expires (the reaper, attempt + 1);
    ``queued``/``running`` → ``cancelled``; ``running`` → ``failed`` after the last attempt
    (``failure: infrastructure``).
    """

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        """True for a state no worker will change any more."""
        return self in (JobState.DONE, JobState.FAILED, JobState.CANCELLED)


JOB_TRANSITIONS: Mapping[JobState, frozenset[JobState]] = {
    JobState.QUEUED: frozenset({JobState.RUNNING, JobState.CANCELLED}),
    JobState.RUNNING: frozenset(
        {JobState.DONE, JobState.QUEUED, JobState.FAILED, JobState.CANCELLED}
    ),
    JobState.DONE: frozenset({JobState.QUEUED}),  # a rescore queues the job again
    JobState.FAILED: frozenset({JobState.QUEUED}),
    JobState.CANCELLED: frozenset(),
}
"""Allowed moves of :class:`JobState`; the job store refuses every other one."""


class Direction(StrEnum):
    """Which way a metric improves."""

    HIGHER = "higher"
    LOWER = "lower"
    NEUTRAL = "neutral"

    @property
    def higher_is_better(self) -> bool:
        """True for ``higher``; ranking a ``neutral`` metric is refused where it is declared."""
        return self is Direction.HIGHER
