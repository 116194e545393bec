"""Infrastructure failures flagged for the organizer, and the organizer's refund of one.

A job whose worker was lost ``max_attempts`` times ends ``failed: infrastructure`` and its
submission is flagged (``store.jobs.reap``), as is one that failed ``platform`` after it reached
hidden data (``store.jobs.commit``); the first such submission per team and phase is
refunded there and then, later ones only here, by an organizer who looked at the case (an
entry must not buy free reruns by killing its worker on purpose). A refunded submission no
longer counts against the phase's quota.
"""

from __future__ import annotations

from sqlalchemy import select

from proctor.errors import NotFoundError, RefusedError
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import Flagged, FlaggedList
from proctor.services.platform.console import organizers_only
from proctor.services.platform.resources import Platform
from proctor.services.platform.submission_ids import full_id
from proctor.store.models import SubmissionRow, Team


def _entry(row: SubmissionRow, team: str | None) -> Flagged:
    return Flagged(
        submission=row.id,
        team=team,
        challenge=row.challenge,
        phase=row.phase,
        flagged=row.flagged,
        refunded=row.refunded,
    )


def flagged(platform: Platform, principal: Principal) -> FlaggedList:
    """Every flagged submission (oldest first) and whether it was refunded (organizers)."""
    organizers_only(principal)
    with platform.db() as session:
        rows = session.execute(
            select(SubmissionRow, Team.name)
            .join(Team, Team.id == SubmissionRow.team_id)
            .where(SubmissionRow.flagged)
            .order_by(SubmissionRow.created, SubmissionRow.id)
        ).all()
        return FlaggedList(flagged=[_entry(row, team) for row, team in rows])


def refund(platform: Platform, principal: Principal, sid: str) -> Flagged:
    """Refund flagged submission ``sid`` so it stops counting against its team's quota.

    "Not found" to every participant (the console's rule, ``console.organizers_only``);
    refused when the submission was not flagged (only lost workers are refunded) or is
    refunded already.
    """
    organizers_only(principal)
    sid = full_id(platform, principal, sid)
    with platform.db.begin() as session:
        row = session.get(SubmissionRow, sid)
        if row is None:
            raise NotFoundError(f"no submission {sid!r}")
        if not row.flagged:
            raise RefusedError(
                f"submission {sid} was not flagged: only submissions whose worker was lost, "
                "or that the platform failed after they reached hidden data, are refunded"
            )
        if row.refunded:
            raise RefusedError(f"submission {sid} is refunded already")
        row.refunded = True
        team = session.get(Team, row.team_id)
        answer = _entry(row, team.name if team else None)
    platform.audit(principal.name, "submission.refund", sid)
    return answer
