"""The organizer's users and teams: list them, add or disable a user, move a member, quotas.

Organizers only (``console.organizers_only``). Disabling a user revokes their API tokens and
ends their browser sessions in the same transaction (and a disabled user is refused at once in
any case: ``accounts.authenticate``, ``sessions.who``). Moving a member locks the new team's row
while its members are counted (``accounts.team_with_room``), as a join does. A team's quota
override is read by ``quota.check_quota`` inside the submission's transaction that holds the
team's lock, so a change applies to the next check.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from sqlalchemy import delete, select, update

from proctor.errors import NotFoundError, UsageError
from proctor.services.platform.accounts import ORGANIZER, Principal, add_user, team_with_room
from proctor.services.platform.answers import (
    Disabled,
    Moved,
    NewUser,
    TeamQuotaAnswer,
    TeamQuotaLimits,
    TeamRow,
    UserRow,
    UsersAndTeams,
)
from proctor.services.platform.console import organizers_only
from proctor.services.platform.quota import QUOTA_LIMITS, iso
from proctor.services.platform.resources import Platform
from proctor.store.locks import lock_row
from proctor.store.models import ApiToken, Membership, Team, TeamQuota, User, WebSession


def users_and_teams(platform: Platform, principal: Principal) -> UsersAndTeams:
    """Every user (name, role, team, disabled) and team (members, quota override)."""
    organizers_only(principal)
    with platform.db() as session:
        rows = session.execute(
            select(User, Team.name)
            .outerjoin(Membership, Membership.user_id == User.id)
            .outerjoin(Team, Team.id == Membership.team_id)
            .order_by(User.name)
        ).all()
        members: dict[str, list[str]] = defaultdict(list)
        for user, team in rows:
            if team is not None:
                members[team].append(user.name)
        quotas = {q.team_id: q for q in session.scalars(select(TeamQuota))}
        teams = [
            TeamRow(
                team=team.name,
                members=members.get(team.name, []),
                quota=_quota(quotas.get(team.id)),
            )
            for team in session.scalars(select(Team).order_by(Team.name))
        ]
    users = [
        UserRow(
            user=user.name,
            role=user.role,
            team=team,
            disabled=user.disabled,
            created=iso(user.created),
            email=user.email,
            state=_state(user),
        )
        for user, team in rows
    ]
    return UsersAndTeams(users=users, teams=teams)


def _state(user: User) -> str:
    """What the user may do now: active, disabled, unconfirmed or pending (approval)."""
    if user.disabled:
        return "disabled"
    if user.email is not None and user.email_verified is None:
        return "unconfirmed"
    return "pending" if user.approval == "pending" else "active"


def _quota(row: TeamQuota | None) -> TeamQuotaLimits | None:
    if row is None:
        return None
    return TeamQuotaLimits(**{name: getattr(row, name) for name in QUOTA_LIMITS})


def create_user(
    platform: Platform, principal: Principal, name: str, team: str | None, organizer: bool
) -> NewUser:
    """Add user ``name`` (in ``team``): the new user and their token, shown once."""
    organizers_only(principal)
    if organizer and team is not None:
        raise UsageError("organizers stay outside teams: leave the team out")
    made = add_user(platform, name, organizer=organizer, team=team)
    platform.audit(principal.name, "user.create", name, f"team={team} organizer={organizer}")
    return made


def disable(platform: Platform, principal: Principal, name: str) -> Disabled:
    """Disable user ``name``: their tokens are revoked and their browser sessions end."""
    organizers_only(principal)
    if name == principal.name:
        raise UsageError("you cannot disable yourself: ask another organizer")
    with platform.db.begin() as session:
        user = session.scalar(select(User).where(User.name == name))
        if user is None:
            raise NotFoundError(f"no user {name!r}")
        user.disabled = True
        now = time.time()
        session.execute(
            update(ApiToken)
            .where(ApiToken.user_id == user.id, ApiToken.revoked.is_(False))
            .values(revoked=True)
        )
        session.execute(
            update(WebSession)
            .where(WebSession.user_id == user.id, WebSession.ended.is_(None))
            .values(ended=now)
        )
    platform.audit(principal.name, "user.disable", name)
    return Disabled(user=name, disabled=True)


def move_member(platform: Platform, principal: Principal, name: str, team: str) -> Moved:
    """Move participant ``name`` into ``team`` (created if missing; refused when it is full)."""
    organizers_only(principal)
    with platform.db.begin() as session:
        user = session.scalar(select(User).where(User.name == name))
        if user is None:
            raise NotFoundError(f"no user {name!r}")
        if user.role == ORGANIZER:
            raise UsageError("organizers stay outside teams: move a participant")
        before = session.scalar(
            select(Team.name)
            .join(Membership, Membership.team_id == Team.id)
            .where(Membership.user_id == user.id)
        )
        if before == team:
            raise UsageError(f"{name!r} is in team {team!r} already")
        target = team_with_room(session, team, platform.settings.team_size)
        session.execute(delete(Membership).where(Membership.user_id == user.id))
        session.add(Membership(user_id=user.id, team_id=target.id))
    platform.audit(principal.name, "team.move", name, f"{before} -> {team}")
    return Moved(user=name, team=team, previous=before)


def set_quota(
    platform: Platform, principal: Principal, team: str, limits: dict[str, Any]
) -> TeamQuotaAnswer:
    """Set team ``team``'s quota override (``limits``: each of ``QUOTA_LIMITS`` or None).

    All limits None removes the override (the phase's quota applies again).
    """
    organizers_only(principal)
    unknown = set(limits) - set(QUOTA_LIMITS)
    if unknown:
        raise UsageError(f"unknown quota limits {sorted(unknown)}: use {', '.join(QUOTA_LIMITS)}")
    for name, value in limits.items():
        if value is not None and value <= 0:
            raise UsageError(f"quota {name} must be above 0 (leave it out for the phase's)")
    with platform.db.begin() as session:
        found = session.scalar(select(Team).where(Team.name == team))
        if found is None:
            raise NotFoundError(f"no team {team!r}")
        lock_row(session, Team, found.id)  # a submission's quota check waits for the change
        row = session.get(TeamQuota, found.id)
        if all(value is None for value in limits.values()):
            if row is not None:
                session.delete(row)
            quota = None
        else:
            if row is None:
                row = TeamQuota(team_id=found.id)
                session.add(row)
            for name in QUOTA_LIMITS:
                setattr(row, name, limits.get(name))
            row.changed, row.changed_by = time.time(), principal.name
            quota = {name: limits.get(name) for name in QUOTA_LIMITS}
    platform.audit(principal.name, "team.quota", team, repr(quota))
    shown = TeamQuotaLimits(**quota) if quota is not None else None
    return TeamQuotaAnswer(team=team, quota=shown)
