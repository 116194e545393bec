"""The organizer's side of registration: the list, approve or deny, invite, the participants CSV.

Organizers only (``console.organizers_only``: anyone else gets 404). Every decision and
invitation is in the audit trail. A decision's answer names the person to tell
(``Decision.notify``): the mailer sends the notice from it.
"""

from __future__ import annotations

import csv
import io
import logging
import re
import time

from sqlalchemy import func, select

from proctor.errors import NotFoundError, UsageError
from proctor.services.platform import mail
from proctor.services.platform.accounts import NAME, Principal
from proctor.services.platform.console import organizers_only
from proctor.services.platform.installs import current, installed_names
from proctor.services.platform.quota import iso
from proctor.services.platform.registration_answers import (
    Decision,
    Invited,
    RegistrationList,
    RegistrationRow,
)
from proctor.services.platform.registrations import APPROVED, DENIED, PENDING
from proctor.services.platform.resources import Platform
from proctor.store.models import (
    ChallengeInvite,
    Membership,
    Registration,
    SubmissionRow,
    Team,
    User,
)

log = logging.getLogger(__name__)
CSV_COLUMNS = ("name", "email", "team", "state", "registered", "terms_version", "submissions")
DECISIONS = {"approve": APPROVED, "deny": DENIED}
MAX_INVITEES = 500
EMAIL = re.compile(r"^[^@\s,;<>]{1,64}@[^@\s,;<>]{1,190}\.[^@\s,;<>.]{2,63}$")
"""The shape of an invited address (the mailer checks addresses fully when it sends)."""


def registrations(platform: Platform, principal: Principal, name: str) -> RegistrationList:
    """Challenge ``name``'s registrations, pending first, with each person's submissions."""
    organizers_only(principal)
    _, challenge = current(platform, name)
    with platform.db() as session:
        found = session.execute(
            select(Registration, User.name, Team.name, User.email, User.email_verified)
            .join(User, User.id == Registration.user_id)
            .outerjoin(Membership, Membership.user_id == User.id)
            .outerjoin(Team, Team.id == Membership.team_id)
            .where(Registration.challenge == name)
        ).all()
        counts: dict[int, int] = {
            user_id: count
            for user_id, count in session.execute(
                select(SubmissionRow.user_id, func.count())
                .where(SubmissionRow.challenge == name)
                .group_by(SubmissionRow.user_id)
            )
        }
        invited = session.scalars(
            select(ChallengeInvite.invitee)
            .where(ChallengeInvite.challenge == name)
            .order_by(ChallengeInvite.invitee)
        ).all()
    rows = [
        RegistrationRow(
            user=user,
            email=email if email and verified is not None else "",
            team=team,
            state=row.state,
            registered=iso(row.registered),
            terms_version=row.terms_version,
            decided=iso(row.decided) if row.decided is not None else None,
            decided_by=row.decided_by,
            submissions=counts.get(row.user_id, 0),
        )
        for row, user, team, email, verified in sorted(
            found, key=lambda item: (item[0].state != PENDING, item[0].registered)
        )
    ]
    spec = challenge.registration
    return RegistrationList(
        challenge=name,
        mode=spec.mode if spec else "none",
        pending=sum(1 for row in rows if row.state == PENDING),
        registrations=rows,
        invited=list(invited),
    )


def pending_counts(platform: Platform, principal: Principal) -> dict[str, int]:
    """Per installed challenge, the registrations waiting for a decision (for the console)."""
    organizers_only(principal)
    with platform.db() as session:
        counts: dict[str, int] = {
            challenge: count
            for challenge, count in session.execute(
                select(Registration.challenge, func.count())
                .where(Registration.state == PENDING)
                .group_by(Registration.challenge)
            )
        }
    return {name: counts.get(name, 0) for name in installed_names(platform)}


def decide(
    platform: Platform, principal: Principal, name: str, user: str, decision: str
) -> Decision:
    """Approve or deny ``user``'s registration to challenge ``name`` (``approve`` | ``deny``).

    A decision may be changed later (a denied person approved, an approved one denied: they
    then cannot submit). The answer's ``notify`` is the person the mailer tells.
    """
    organizers_only(principal)
    if decision not in DECISIONS:
        raise UsageError(f"decision {decision!r}: choose approve or deny")
    current(platform, name)
    state = DECISIONS[decision]
    with platform.db.begin() as session:
        found = session.scalar(
            select(Registration)
            .join(User, User.id == Registration.user_id)
            .where(Registration.challenge == name, User.name == user)
        )
        if found is None:
            raise NotFoundError(f"{user!r} has not registered to {name!r}")
        found.state = state
        found.decided = time.time()
        found.decided_by = principal.name
    platform.audit(principal.name, f"registration.{decision}", name, f"user={user}")
    _tell(platform, name, user, state)
    return Decision(challenge=name, user=user, state=state, notify=user)


def _tell(platform: Platform, challenge: str, user: str, state: str) -> None:
    """Mail ``user`` the organizer's decision on their registration, where mail can reach them.

    No confirmed address or no mail server: nothing is sent (the challenge page says the
    state). A mail server that refuses is logged; the decision stands.
    """
    settings = platform.settings
    with platform.db() as session:
        found = session.execute(
            select(User.email, User.email_verified).where(User.name == user)
        ).first()
    if found is None or not found.email or found.email_verified is None or settings.smtp is None:
        return
    page = mail.link(settings, f"/challenges/{challenge}")
    if state == APPROVED:
        subject = f"You may take part in {challenge}"
        body = f"Your registration to {challenge} was approved: you may now submit.\n{page}\n"
    else:
        subject = f"Your registration to {challenge}"
        body = (
            f"Your registration to {challenge} was not approved by the organizers.\n"
            f"Reply to them if you think this is a mistake. {page}\n"
        )
    try:
        mail.send(settings, found.email, subject, body)
    except (mail.MailHeaderError, mail.MailUnavailableError) as error:
        log.warning("registration notice to %s not sent: %s", user, error)


def approve_pending(platform: Platform, principal: Principal, name: str) -> list[Decision]:
    """Approve every pending registration of challenge ``name``; a decision per person."""
    waiting = [
        row.user
        for row in registrations(platform, principal, name).registrations
        if row.state == PENDING
    ]
    return [decide(platform, principal, name, user, "approve") for user in waiting]


def _invitee(person: str) -> str:
    """An invitation's key: a user name as written, or an email address in lower case."""
    return person.lower() if "@" in person else person


def invite(platform: Platform, principal: Principal, name: str, people: list[str]) -> Invited:
    """Invite people (user names or email addresses) to challenge ``name``.

    Those invited already stay invited. An email invites the account that has it (once
    accounts have an email), so people may be invited before they sign up.
    """
    organizers_only(principal)
    current(platform, name)
    wanted = list(dict.fromkeys(_invitee(p.strip()) for p in people if p.strip()))
    if not wanted:
        raise UsageError("name the people to invite: user names or emails, one per line")
    if len(wanted) > MAX_INVITEES:
        raise UsageError(f"invite at most {MAX_INVITEES} people at once")
    bad = [p for p in wanted if not (NAME.match(p) or EMAIL.match(p))]
    if bad:
        raise UsageError(
            f"neither a user name nor an email: {', '.join(bad[:5])}: write one per line"
        )
    now = time.time()
    with platform.db.begin() as session:
        have = set(
            session.scalars(
                select(ChallengeInvite.invitee).where(ChallengeInvite.challenge == name)
            )
        )
        for person in wanted:
            if person not in have:
                session.add(
                    ChallengeInvite(
                        challenge=name, invitee=person, created=now, created_by=principal.name
                    )
                )
    platform.audit(principal.name, "registration.invite", name, ", ".join(wanted)[:1000])
    return Invited(challenge=name, invited=sorted(have | set(wanted)))


def participants_csv(platform: Platform, principal: Principal, name: str) -> str:
    """Challenge ``name``'s registrants as CSV: ``CSV_COLUMNS``, one row a person.

    ``email`` is the account's confirmed address (empty for accounts an organizer made).
    """
    listed = registrations(platform, principal, name)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in listed.registrations:
        writer.writerow(
            [
                _cell(row.user),
                _cell(row.email),
                _cell(row.team or ""),
                row.state,
                row.registered,
                row.terms_version,
                row.submissions,
            ]
        )
    return out.getvalue()


def _cell(text: str) -> str:
    """A text cell a spreadsheet will not run as a formula (``=``, ``+``, ``-``, ``@`` first)."""
    return f"'{text}" if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
