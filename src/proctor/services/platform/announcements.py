"""An organizer mails a challenge's participants: all of them, or by how their team fares.

Audiences: ``registered`` (every approved registrant; for a challenge without registration,
every person who submitted to it), ``scored`` (the members of teams with a scored
submission), ``failed`` (the members of teams whose last submission failed). Only confirmed
addresses are written to, one mail each (nobody sees another's address). A challenge takes
one announcement per ``GAP_S`` and at most ``MAX_RECIPIENTS`` people at a time; each is
recorded in the audit log with its audience, subject and count.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from proctor.errors import RefusedError, UsageError
from proctor.services.platform import mail
from proctor.services.platform.accounts import Principal
from proctor.services.platform.console import organizers_only
from proctor.services.platform.installs import current
from proctor.services.platform.registrations import APPROVED
from proctor.services.platform.resources import Platform
from proctor.store.models import (
    AuditEvent,
    Job,
    Membership,
    Registration,
    Result,
    SubmissionRow,
    User,
)
from proctor.types import JobState

Audience = Literal["registered", "scored", "failed"]
AUDIENCES: tuple[Audience, ...] = ("registered", "scored", "failed")
ACTION = "participants.emailed"
GAP_S = 15 * 60.0
"""Seconds between two announcements of one challenge."""
MAX_RECIPIENTS = 2000
MAX_BODY = 20_000
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Announcement:
    """What an announcement did: its audience, how many were mailed, how many mails failed."""

    challenge: str
    audience: Audience
    sent: int
    failed: int


def email_participants(
    platform: Platform,
    principal: Principal,
    challenge: str,
    *,
    audience: str,
    subject: str,
    body: str,
) -> Announcement:
    """Mail ``audience`` of ``challenge`` (organizers); refused within ``GAP_S`` of the last."""
    organizers_only(principal)
    current(platform, challenge)
    chosen = _audience(audience)
    subject, body = subject.strip(), body.strip()
    if not subject or not body:
        raise UsageError("write a subject and a message")
    if len(body) > MAX_BODY:
        raise UsageError(f"the message is {len(body):,} characters: keep it under {MAX_BODY:,}")
    if platform.settings.smtp is None:
        raise UsageError("no mail server is set: set PROCTOR_SMTP_URL (docs/hosting.md)")
    mail.message(platform.settings, "check@example.org", subject, body)  # header check first
    _check_gap(platform, challenge)
    addresses = recipients(platform, challenge, chosen)
    if len(addresses) > MAX_RECIPIENTS:
        raise RefusedError(
            f"{len(addresses):,} recipients: announcements reach at most {MAX_RECIPIENTS:,}"
        )
    platform.audit(
        principal.name, ACTION, challenge, f"audience={chosen} to={len(addresses)} {subject}"
    )
    sent = failed = 0
    for address in addresses:
        try:
            mail.send(platform.settings, address, f"[{challenge}] {subject}", body + "\n")
            sent += 1
        except mail.MailUnavailableError as error:
            failed += 1
            log.warning("announcement to %s not sent: %s", address, error)
    return Announcement(challenge, chosen, sent, failed)


def _audience(text: str) -> Audience:
    for audience in AUDIENCES:
        if text == audience:
            return audience
    raise UsageError(f"audience {text!r}: choose one of {', '.join(AUDIENCES)}")


def _check_gap(platform: Platform, challenge: str) -> None:
    """Refuse a second announcement of ``challenge`` within ``GAP_S``."""
    with platform.db() as session:
        last = session.scalar(
            select(func.max(AuditEvent.at)).where(
                AuditEvent.action == ACTION, AuditEvent.subject == challenge
            )
        )
    if last is not None and time.time() - last < GAP_S:
        wait = int((GAP_S - (time.time() - last)) // 60) + 1
        raise RefusedError(f"{challenge} had an announcement just now: wait {wait} min")


def recipients(platform: Platform, challenge: str, audience: Audience) -> list[str]:
    """The confirmed addresses ``audience`` names, sorted and without repeats."""
    _, spec = current(platform, challenge)
    with platform.db() as session:
        if audience == "registered":
            if spec.registration is not None:
                users = select(Registration.user_id).where(
                    Registration.challenge == challenge, Registration.state == APPROVED
                )
            else:
                users = select(SubmissionRow.user_id).where(SubmissionRow.challenge == challenge)
            people = set(session.scalars(users))
        else:
            teams = _teams_by_outcome(session, challenge, audience)
            people = set(
                session.scalars(select(Membership.user_id).where(Membership.team_id.in_(teams)))
            )
        rows = session.scalars(
            select(User.email).where(
                User.id.in_(people),
                User.email.is_not(None),
                User.email_verified.is_not(None),
                User.disabled.is_(False),
            )
        )
        return sorted({address for address in rows if address})


def _teams_by_outcome(session: Session, challenge: str, audience: Audience) -> set[int]:
    """Teams with a scored submission (``scored``) or whose last one failed (``failed``).

    A submission is scored when every task is, and failed when any task failed.
    """
    rows = session.execute(
        select(
            SubmissionRow.id, SubmissionRow.team_id, SubmissionRow.created, Job.state, Result.status
        )
        .join(Job, Job.submission_id == SubmissionRow.id)
        .outerjoin(Result, Result.job_id == Job.id)
        .where(SubmissionRow.challenge == challenge, SubmissionRow.cancelled.is_(False))
    ).all()
    tasks: dict[str, list[str]] = defaultdict(list)
    made: dict[str, tuple[int, float]] = {}
    for submission, team, created, state, status in rows:
        failed = state == JobState.FAILED or status == "failed"
        scored = state == JobState.DONE and status == "scored"
        tasks[submission].append("failed" if failed else "scored" if scored else "other")
        made[submission] = (team, created)
    verdicts = {
        submission: "failed" if "failed" in kinds else "scored" if set(kinds) == {"scored"} else ""
        for submission, kinds in tasks.items()
    }
    if audience == "scored":
        return {made[s][0] for s, verdict in verdicts.items() if verdict == "scored"}
    last: dict[int, tuple[float, str]] = {}
    for submission, (team, created) in made.items():
        if team not in last or created > last[team][0]:
            last[team] = (created, verdicts[submission])
    return {team for team, (_, verdict) in last.items() if verdict == "failed"}
