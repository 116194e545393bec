"""Row writes shared by the lease holder's calls (``store.jobs``) and upkeep (``job_upkeep``)."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import CursorResult, Update, select, update
from sqlalchemy.orm import Session

from proctor.store.models import Attempt, Job, SubmissionRow


def changed(session: Session, statement: Update) -> int:
    """Run an ``UPDATE`` and return how many rows it changed."""
    result = cast("CursorResult[Any]", session.execute(statement))
    return int(result.rowcount)


def end_attempt(session: Session, job_id: int, attempt: int, outcome: str, at: float) -> None:
    """Record the end of ``attempt`` of ``job_id`` (``scored``, ``failed``, ``lost``, ...)."""
    changed(
        session,
        update(Attempt)
        .where(Attempt.job_id == job_id, Attempt.attempt == attempt)
        .values(ended=at, outcome=outcome),
    )


def flag_and_refund(session: Session, job_id: int) -> None:
    """Flag the job's submission; refund it when it is its team's first in the phase."""
    submission = session.get(SubmissionRow, session.get(Job, job_id).submission_id)  # type: ignore[union-attr]
    if submission is None or submission.flagged:
        return
    submission.flagged = True
    earlier = session.scalar(
        select(SubmissionRow.id).where(
            SubmissionRow.team_id == submission.team_id,
            SubmissionRow.challenge == submission.challenge,
            SubmissionRow.phase == submission.phase,
            SubmissionRow.flagged,
            SubmissionRow.refunded,
            SubmissionRow.id != submission.id,
        )
    )
    submission.refunded = earlier is None
