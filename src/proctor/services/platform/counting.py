"""Whether a submission counts against its team's quota, hence whether any of its results shows.

One rule serves the quota, ``status``, the boards and publications, so a participant can never
get a scored result that cost nothing:

* a submission counts once any of its jobs started a stage on hidden data (exam, rerun, score:
  ``Job.hidden_started``), cancelled or not;
* a cancelled submission none of whose jobs reached hidden data is free;
* a submission the platform provably failed is free: a task failed ``platform`` (raised only
  for faults the entry cannot cause, such as the harness's status before the budget clock
  started) before that job reached hidden data;
* a refunded submission is free: a lost worker (``infrastructure``) or a ``platform`` failure
  after the job reached hidden data, the team's first per phase at once (``store.jobs``), later
  ones by an organizer who looked at it;
* every other submission counts.

Nothing scored of a free submission is shown: no report for a cancelled one, only the platform's
or infrastructure's failures for a refunded or platform-failed one, and it is on no board.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, exists, select
from sqlalchemy.orm import Session, aliased

from proctor.store.models import Job, SubmissionRow
from proctor.types import Failure

WITHHELD = (
    "this submission does not count against your team's quota ({why}): the results of its "
    "other tasks are withheld; submit again"
)


@dataclass(frozen=True, slots=True)
class JobFacts:
    """What the rule needs of one job: how it failed and whether it reached hidden data."""

    failure: str | None
    hidden_started: float | None


def counts(*, cancelled: bool, refunded: bool, jobs: Iterable[JobFacts]) -> bool:
    """True when a submission with these jobs counts against its team's quota."""
    facts = list(jobs)
    if refunded or any(_platform_before_hidden(job) for job in facts):
        return False
    if cancelled:
        return any(job.hidden_started is not None for job in facts)
    return True


def _platform_before_hidden(job: JobFacts) -> bool:
    """True for a job the platform failed before it reached hidden data."""
    return job.failure == Failure.PLATFORM and job.hidden_started is None


def facts_of(jobs: Iterable[Job]) -> list[JobFacts]:
    """The rule's view of stored jobs."""
    return [JobFacts(job.failure, job.hidden_started) for job in jobs]


def submission_counts(session: Session, row: SubmissionRow) -> bool:
    """True when stored submission ``row`` counts against its team's quota."""
    jobs = session.scalars(select(Job).where(Job.submission_id == row.id))
    return counts(cancelled=row.cancelled, refunded=row.refunded, jobs=facts_of(jobs))


def why_free(row: SubmissionRow) -> str:
    """The reason a free submission that was not cancelled is free, for its report."""
    return "it was refunded" if row.refunded else "the platform failed before hidden data"


def shows_results() -> ColumnElement[bool]:
    """SQL: the submission (``SubmissionRow``) may show scored results on a board.

    Not cancelled (a cancelled submission is on no board, counted or not), not refunded, and no
    job of it failed ``platform`` before it reached hidden data.
    """
    other = aliased(Job)
    platform_failed = exists(
        select(other.id).where(
            other.submission_id == SubmissionRow.id,
            other.failure == Failure.PLATFORM,
            other.hidden_started.is_(None),
        )
    )
    return and_(
        SubmissionRow.cancelled.is_(False), SubmissionRow.refunded.is_(False), ~platform_failed
    )
