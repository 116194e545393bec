"""Team invitations: a member (or an organizer) makes a one-use code, another user joins with it.

Codes are stored only as their sha256, are used once, and expire after ``INVITE_DAYS``. A
team never grows past the service's ``team_size``; organizers stay outside teams. Both rules
hold under concurrent joins: the team's row is locked while its members are counted, and a code
is claimed by a conditional update (only while unused), so one code admits one user.
"""

from __future__ import annotations

import secrets
import time

from sqlalchemy import select, update

from proctor.errors import ForbiddenError, NotFoundError, UsageError
from proctor.services.platform.accounts import Principal, digest_of, team_with_room
from proctor.services.platform.answers import Invitation, Joined
from proctor.services.platform.quota import iso
from proctor.services.platform.resources import Platform
from proctor.store.models import Invite, Membership, Team

INVITE_DAYS = 7
_DAY_S = 86400.0


def _team_to_invite_to(platform: Platform, principal: Principal, team: str | None) -> Team:
    """The team named (organizers) or the caller's own (participants)."""
    if not principal.organizer:
        if principal.team is None:
            raise UsageError("you are in no team: an organizer adds you to one first")
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
        team_with_room(session, team.name, platform.settings.team_size)
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
