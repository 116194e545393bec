"""Teams made by participants: create one, invite with a one-use code, join, leave.

Codes are stored only as their sha256, are used once, and expire after ``INVITE_DAYS``. A
team never grows past the service's ``team_size``, nor past the ``registration.team_size``
of any challenge one of its members (or the person joining) registered to; organizers stay
outside teams. Both rules hold under concurrent joins: the team's row is locked while its
members are counted, and a code is claimed by a conditional update (only while unused), so
one code admits one user. A member may leave while the team has no submission; the last
one to leave removes the team.
"""

from __future__ import annotations

import secrets
import time

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from proctor.errors import ForbiddenError, NotFoundError, RefusedError, UsageError
from proctor.services.platform.accounts import NAME, Principal, digest_of, team_with_room
from proctor.services.platform.answers import Invitation, Joined
from proctor.services.platform.installs import current, installed_names
from proctor.services.platform.organizer_team import ORGANIZER_TEAM
from proctor.services.platform.quota import iso
from proctor.services.platform.registrations import DENIED
from proctor.services.platform.resources import Platform
from proctor.store.locks import lock_row
from proctor.store.models import (
    Invite,
    Membership,
    Registration,
    SubmissionRow,
    Team,
    TeamQuota,
    User,
)

INVITE_DAYS = 7
_DAY_S = 86400.0


def _team_to_invite_to(platform: Platform, principal: Principal, team: str | None) -> Team:
    """The team named (organizers) or the caller's own (participants)."""
    if not principal.organizer:
        if principal.team is None:
            raise UsageError("you are in no team: create one first (the Team page, /team)")
        if team is not None and team != principal.team:
            raise ForbiddenError(f"you may invite only to your own team, {principal.team!r}")
        team = principal.team
    if team is None:
        raise UsageError("name the team to invite to")
    with platform.db() as session:
        found = session.scalar(select(Team).where(Team.name == team))
    if found is None:
        raise NotFoundError(f"no team {team!r}")
    return found


def invite(platform: Platform, principal: Principal, team: str | None = None) -> Invitation:
    """A one-use code another user joins ``team`` with (a participant's own team by default)."""
    target = _team_to_invite_to(platform, principal, team)
    code = secrets.token_hex(16)  # hex: a code never begins with "-" and reads as a CLI option
    now = time.time()
    with platform.db.begin() as session:
        session.add(Invite(team_id=target.id, digest=digest_of(code), created=now))
    platform.audit(principal.name, "team.invite", target.name)
    return Invitation(team=target.name, code=code, expires=iso(now + INVITE_DAYS * _DAY_S))


def join(platform: Platform, principal: Principal, code: str) -> Joined:
    """Join the team ``code`` invites to; refusals say what to do."""
    if principal.organizer:
        raise UsageError("organizers stay outside teams: join with a participant's account")
    if principal.team is not None:
        raise UsageError(f"you are in team {principal.team!r} already")
    caps = _team_caps(platform)  # read before the transaction: it holds one connection
    with platform.db.begin() as session:
        found = session.scalar(select(Invite).where(Invite.digest == digest_of(code)))
        if found is None or found.used_by is not None:
            raise NotFoundError("this invitation is unknown or used: ask for a new one")
        if found.created < time.time() - INVITE_DAYS * _DAY_S:
            raise NotFoundError(
                f"this invitation expired ({INVITE_DAYS} days after it was made): ask for a new one"
            )
        team = session.get(Team, found.team_id)
        if team is None:
            raise NotFoundError("this invitation's team no longer exists")
        lock_row(session, Team, team.id)  # the cap is read after joins before this one
        largest = _largest_team(platform, session, team, principal, caps)
        team_with_room(session, team.name, largest)
        claim = (
            update(Invite)
            .where(Invite.id == found.id, Invite.used_by.is_(None))
            .values(used_by=principal.user_id)
            .execution_options(synchronize_session=False)
        )
        if session.execute(claim).rowcount != 1:  # type: ignore[attr-defined]
            raise NotFoundError("this invitation is unknown or used: ask for a new one")
        session.add(Membership(user_id=principal.user_id, team_id=team.id))
        name = team.name
    platform.audit(principal.name, "team.join", name)
    return Joined(user=principal.name, team=name)


def _team_caps(platform: Platform) -> dict[str, int]:
    """Each installed challenge's ``registration.team_size``, where it sets one."""
    caps: dict[str, int] = {}
    for name in installed_names(platform):
        spec = current(platform, name)[1].registration
        if spec is not None and spec.team_size is not None:
            caps[name] = spec.team_size
    return caps


def _largest_team(
    platform: Platform, session: Session, team: Team, joiner: Principal, caps: dict[str, int]
) -> int:
    """The most members ``team`` may have once ``joiner`` is in it (the smallest cap).

    The service's ``team_size``, and the ``caps`` (``_team_caps``) of the challenges the
    team's members or the joiner registered to, read in ``session`` (which holds the lock).
    """
    members = select(Membership.user_id).where(Membership.team_id == team.id)
    registered = session.scalars(
        select(Registration.challenge).where(
            (Registration.user_id.in_(members)) | (Registration.user_id == joiner.user_id),
            Registration.state != DENIED,
        )
    )
    sizes = [platform.settings.team_size, *(caps[n] for n in set(registered) if n in caps)]
    return min(sizes)


def create(platform: Platform, principal: Principal, name: str) -> Joined:
    """Create team ``name`` with the caller as its first member (a participant in no team)."""
    if principal.organizer:
        raise UsageError("organizers stay outside teams: create it with a participant's account")
    if principal.team is not None:
        raise UsageError(f"you are in team {principal.team!r} already: leave it first")
    if not NAME.match(name):
        raise UsageError(
            f"team name {name!r} is not allowed: use 1-64 letters, digits, '_', '.', '-'"
        )
    if name == ORGANIZER_TEAM:
        raise UsageError(f"{ORGANIZER_TEAM!r} is the organizers' test team: choose another name")
    try:
        with platform.db.begin() as session:
            if session.scalar(select(Team.id).where(Team.name == name)) is not None:
                raise UsageError(f"team {name!r} exists already: choose another name")
            team = Team(name=name, created=time.time())
            session.add(team)
            session.flush()
            session.add(Membership(user_id=principal.user_id, team_id=team.id))
    except IntegrityError:
        raise UsageError(f"team {name!r} exists already, or you joined a team meanwhile") from None
    platform.audit(principal.name, "team.create", name)
    return Joined(user=principal.name, team=name)


def leave(platform: Platform, principal: Principal) -> Joined:
    """Leave the caller's team, refused once the team has a submission; the last one removes it."""
    if principal.team_id is None or principal.team is None:
        raise UsageError("you are in no team")
    with platform.db.begin() as session:
        submitted = session.scalar(
            select(func.count()).where(SubmissionRow.team_id == principal.team_id)
        )
        if submitted:
            raise RefusedError(
                f"team {principal.team!r} has submissions: its members stay (ask an organizer "
                "to move you)"
            )
        session.execute(delete(Membership).where(Membership.user_id == principal.user_id))
        left = session.scalar(select(func.count()).where(Membership.team_id == principal.team_id))
        if not left:
            session.execute(delete(Invite).where(Invite.team_id == principal.team_id))
            session.execute(delete(TeamQuota).where(TeamQuota.team_id == principal.team_id))
            session.execute(delete(Team).where(Team.id == principal.team_id))
    platform.audit(principal.name, "team.leave", principal.team)
    return Joined(user=principal.name, team=principal.team)


def invitation_team(platform: Platform, code: str) -> str:
    """The team an unused, unexpired invitation ``code`` admits to (nothing is claimed)."""
    with platform.db() as session:
        found = session.scalar(select(Invite).where(Invite.digest == digest_of(code)))
        team = session.get(Team, found.team_id) if found is not None else None
    if found is None or found.used_by is not None or team is None:
        raise NotFoundError("this invitation is unknown or used: ask for a new one")
    if found.created < time.time() - INVITE_DAYS * _DAY_S:
        raise NotFoundError("this invitation expired: ask for a new one")
    return team.name


def members(platform: Platform, principal: Principal) -> list[str]:
    """The names of the caller's team's members (none when in no team)."""
    if principal.team_id is None:
        return []
    with platform.db() as session:
        return list(
            session.scalars(
                select(User.name)
                .join(Membership, Membership.user_id == User.id)
                .where(Membership.team_id == principal.team_id)
                .order_by(User.name)
            )
        )


def has_submissions(platform: Platform, team_id: int | None) -> bool:
    """True when the team made a submission (its members may no longer leave)."""
    if team_id is None:
        return False
    with platform.db() as session:
        count = session.scalar(select(func.count()).where(SubmissionRow.team_id == team_id))
    return bool(count)
