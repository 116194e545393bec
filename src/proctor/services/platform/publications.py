"""What a team shows: publishing or withdrawing a result per task (or part), final choices.

A publication feeds the ``best_published`` boards of the phase (VISCERAL): a team chooses per
submission and per task — or per part of a task, such as one organ of a modality
(``services.board_entries`` explains parts) — what the board may take its best of. Final
choices feed ``only_final`` boards; a team that chose none has its last ``final_entries``
scored submissions counted.
"""

from __future__ import annotations

import time

from sqlalchemy import select
from sqlalchemy.orm import Session

from proctor.errors import RefusedError, UsageError
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import (
    Choices,
    FinalChoice,
    Publication,
    Shown,
)
from proctor.services.platform.board_entries import WHOLE_TASK, task_parts
from proctor.services.platform.installs import current
from proctor.services.platform.quota import submission_counts
from proctor.services.platform.resources import Platform
from proctor.services.platform.submission_ids import full_id
from proctor.services.platform.submissions import visible_submission
from proctor.store.locks import lock_row
from proctor.store.models import FinalChoice as FinalChoiceRow
from proctor.store.models import Job, Result, SubmissionRow, Team
from proctor.store.models import Publication as PublicationRow


def _own_scored(
    session: Session, principal: Principal, sid: str
) -> tuple[SubmissionRow, list[Job]]:
    row = visible_submission(session, principal, sid)
    if row.cancelled or not submission_counts(session, row):
        raise RefusedError(
            f"submission {sid} was cancelled or does not count against your quota: its "
            "results are withheld and cannot be published or chosen"
        )
    jobs = list(session.scalars(select(Job).where(Job.submission_id == sid)))
    return row, jobs


def _check_part(platform: Platform, row: SubmissionRow, task: str, part: str) -> None:
    """Refuse a part the task's metrics do not name, listing the parts it has."""
    if part == WHOLE_TASK:
        return
    _, challenge = current(platform, row.challenge)
    parts = task_parts(challenge.task(task).reported_metrics)
    if part not in parts:
        offered = ", ".join(parts) if parts else "none: publish the whole task"
        raise UsageError(f"task {task!r} has no part {part!r} (parts: {offered})")


def publish(
    platform: Platform,
    principal: Principal,
    sid: str,
    task: str,
    *,
    part: str = WHOLE_TASK,
    published: bool = True,
) -> Publication:
    """Publish (or withdraw) the submission's result on ``task`` (or one ``part`` of it)."""
    sid = full_id(platform, principal, sid)
    with platform.db.begin() as session:
        row, jobs = _own_scored(session, principal, sid)
        lock_row(session, Team, row.team_id)  # two publishes at once: one row, the last wins
        job = next((j for j in jobs if j.task == task), None)
        if job is None:
            known = ", ".join(j.task for j in jobs)
            raise UsageError(f"submission {sid} has no task {task!r} (tasks: {known})")
        _check_part(platform, row, task, part)
        result = session.scalar(select(Result).where(Result.job_id == job.id))
        if result is None or result.status != "scored":
            raise RefusedError(
                f"task {task!r} of submission {sid} is not scored: only a scored result can be "
                "published or withdrawn"
            )
        pub = session.scalar(
            select(PublicationRow).where(
                PublicationRow.submission_id == sid,
                PublicationRow.task == task,
                PublicationRow.part == part,
            )
        )
        if pub is None:
            session.add(
                PublicationRow(
                    submission_id=sid,
                    task=task,
                    part=part,
                    published=published,
                    changed=time.time(),
                )
            )
        else:
            pub.published, pub.changed = published, time.time()
    subject = f"{sid}/{task}" + (f"/{part}" if part else "")
    platform.audit(principal.name, "publish" if published else "withdraw", subject)
    return Publication(submission=sid, task=task, part=part or None, published=published)


def choose_final(platform: Platform, principal: Principal, sid: str) -> FinalChoice:
    """Choose the submission as one of its team's final entries (the oldest choice makes room)."""
    sid = full_id(platform, principal, sid)
    with platform.db.begin() as session:
        row, jobs = _own_scored(session, principal, sid)
        results = session.scalars(
            select(Result.status).where(Result.job_id.in_([j.id for j in jobs]))
        ).all()
        if len(results) != len(jobs) or any(s != "scored" for s in results):
            raise RefusedError(
                f"submission {sid} is not scored: only a scored submission can be a final entry"
            )
        _, challenge = current(platform, row.challenge)
        limit = challenge.phase(row.phase).final_entries
        lock_row(session, Team, row.team_id)  # the count and the choice are one step
        chosen = list(
            session.scalars(
                select(FinalChoiceRow)
                .join(SubmissionRow, SubmissionRow.id == FinalChoiceRow.submission_id)
                .where(
                    FinalChoiceRow.team_id == row.team_id,
                    SubmissionRow.phase == row.phase,
                    SubmissionRow.challenge == row.challenge,
                )
                .order_by(FinalChoiceRow.chosen)
            )
        )
        replaced = None
        if any(c.submission_id == sid for c in chosen):
            return FinalChoice(submission=sid, final=True, replaced=None)
        if len(chosen) >= limit:
            replaced = chosen[0].submission_id
            session.delete(chosen[0])
            session.flush()
        session.add(FinalChoiceRow(team_id=row.team_id, submission_id=sid, chosen=time.time()))
    platform.audit(principal.name, "final", sid, f"replaced={replaced}")
    return FinalChoice(submission=sid, final=True, replaced=replaced)


def choices(platform: Platform, principal: Principal, sid: str) -> Choices:
    """What the submission's team has chosen for it: final or not, and what it published.

    One publication row per task (``part`` None) and one per part of a task that has parts.
    """
    sid = full_id(platform, principal, sid)
    with platform.db() as session:
        row, jobs = _own_scored(session, principal, sid)
        final = session.scalar(select(FinalChoiceRow).where(FinalChoiceRow.submission_id == sid))
        shown = {
            (p.task, p.part): p.published
            for p in session.scalars(
                select(PublicationRow).where(PublicationRow.submission_id == sid)
            )
        }
    _, challenge = current(platform, row.challenge)
    listed = []
    for job in sorted(jobs, key=lambda j: j.id):
        parts = task_parts(challenge.task(job.task).reported_metrics)
        for part in (WHOLE_TASK, *parts):
            published = shown.get((job.task, part), False)
            listed.append(Shown(task=job.task, part=part or None, published=published))
    return Choices(
        final=final is not None,
        final_entries=challenge.phase(row.phase).final_entries,
        publications=listed,
    )
