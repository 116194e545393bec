"""Accounts: users with roles, teams, API tokens (stored hashed), passwords (argon2).

A token is refused once revoked or ``token_days`` after it was issued; issuing, listing and
revoking tokens live in ``services.platform.tokens``, invitations to a team in
``services.platform.teams``.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from argon2 import PasswordHasher
from argon2.exceptions import VerificationError
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from proctor.errors import AuthenticationError, RefusedError, UsageError
from proctor.services.platform.answers import NewUser
from proctor.services.platform.resources import Platform
from proctor.store.locks import lock_row
from proctor.store.models import ApiToken, Membership, Team, User

ORGANIZER, PARTICIPANT = "organizer", "participant"
LAST_USE_STEP_S = 60.0
"""A token's last use is written at most this often (a write per request would be wasted)."""
_DAY_S = 86400.0
CREATE_TRIES = 3
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_hasher = PasswordHasher()


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is asking: a user, their role and team, and the API token they asked with."""

    user_id: int
    name: str
    role: str
    team_id: int | None
    team: str | None
    token_id: int | None = None

    @property
    def organizer(self) -> bool:
        """True for an organizer (sees every team's results and logs)."""
        return self.role == ORGANIZER


def digest_of(token: str) -> str:
    """The sha256 (hex) a token or code is stored as."""
    return hashlib.sha256(token.encode()).hexdigest()


def check_name(kind: str, name: str) -> None:
    """Refuse (``UsageError``) a user or team name outside ``NAME``."""
    if not NAME.match(name):
        raise UsageError(
            f"{kind} name {name!r} is not allowed: use 1-64 letters, digits, '_', '.', '-'"
        )


def team_with_room(session: Session, name: str, size: int) -> Team:
    """The team ``name``, created if missing, locked; refused when it is full.

    The team's row stays locked until the session's transaction ends, so the member added
    next is counted by any other join waiting for the lock.
    """
    check_name("team", name)
    team = session.scalar(select(Team).where(Team.name == name))
    if team is None:
        team = Team(name=name, created=time.time())
        session.add(team)
        session.flush()
    lock_row(session, Team, team.id)
    members = session.scalar(select(func.count()).where(Membership.team_id == team.id))
    if (members or 0) >= size:
        raise RefusedError(f"team {name!r} already has {size} members, the most a team may have")
    return team


def add_user(
    platform: Platform,
    name: str,
    *,
    organizer: bool = False,
    team: str | None = None,
    password: str | None = None,
) -> NewUser:
    """Create user ``name`` (in ``team``, created if missing) and return a new API token.

    Users added at once are each checked in one transaction; one that lost a race to create
    the same user or team is tried again, and then sees the other's row.
    """
    check_name("user", name)
    token = secrets.token_urlsafe(32)
    password_hash = _hasher.hash(password) if password else None
    for attempt in range(CREATE_TRIES):
        try:
            with platform.db.begin() as session:
                if session.scalar(select(User).where(User.name == name)) is not None:
                    raise UsageError(f"user {name!r} exists already: choose another name")
                user = User(
                    name=name,
                    role=ORGANIZER if organizer else PARTICIPANT,
                    created=time.time(),
                    password_hash=password_hash,
                )
                session.add(user)
                session.flush()
                if team is not None:
                    joined = team_with_room(session, team, platform.settings.team_size)
                    session.add(Membership(user_id=user.id, team_id=joined.id))
                session.add(ApiToken(user_id=user.id, digest=digest_of(token), created=time.time()))
            break
        except IntegrityError:
            if attempt == CREATE_TRIES - 1:
                raise
    platform.audit(name, "user.add", name, f"team={team} organizer={organizer}")
    return NewUser(user=name, team=team, token=token)


def authenticate(platform: Platform, token: str | None) -> Principal:
    """The user holding API ``token``; ``AuthenticationError`` saying what to do otherwise.

    A missing, unknown, revoked or expired token (``token_days`` after it was issued) is
    refused; the token's last use is recorded (at most once per ``LAST_USE_STEP_S``).
    """
    if not token:
        raise AuthenticationError("this needs an API token: pass --token or set PROCTOR_TOKEN")
    now = time.time()
    with platform.db() as session:
        row = session.execute(
            select(User, ApiToken, Membership.team_id, Team.name)
            .join(ApiToken, ApiToken.user_id == User.id)
            .outerjoin(Membership, Membership.user_id == User.id)
            .outerjoin(Team, Team.id == Membership.team_id)
            .where(ApiToken.digest == digest_of(token))
        ).first()
    if row is None:
        raise UnknownTokenError(
            "the API token is not valid on this server: ask an organizer for a new one "
            "(organizers: 'proctor user add' and 'proctor token new' make tokens for the "
            "data folder or database they are given; use the one this server was started with)"
        )
    user, held, team_id, team = row
    if user.disabled:
        raise AuthenticationError(f"user {user.name!r} is disabled: ask an organizer")
    _check_usable(held, user.name, now, platform.settings.token_days)
    if held.last_used is None or now - held.last_used >= LAST_USE_STEP_S:
        with platform.db.begin() as session:
            session.execute(update(ApiToken).where(ApiToken.id == held.id).values(last_used=now))
    return Principal(user.id, user.name, user.role, team_id, team, held.id)


class UnknownTokenError(AuthenticationError):
    """A token this server's store does not hold: often one made on another data folder."""


def expires_at(created: float, token_days: float) -> float:
    """When a token issued at ``created`` stops being accepted (epoch seconds)."""
    return created + token_days * _DAY_S


def _check_usable(held: ApiToken, user: str, now: float, token_days: float) -> None:
    """Refuse a revoked or expired token, naming the command that issues the next one."""
    renew = f"ask an organizer for a new one (proctor token new {user})"
    if held.revoked:
        raise AuthenticationError(f"the API token was revoked: {renew}")
    expires = expires_at(held.created, token_days)
    if now >= expires:
        shown = datetime.fromtimestamp(expires, UTC).isoformat(timespec="seconds")
        raise AuthenticationError(f"the API token expired at {shown}: {renew}")


def check_password(platform: Platform, name: str, password: str) -> bool:
    """True when ``password`` is user ``name``'s (argon2 verification)."""
    with platform.db() as session:
        stored = session.scalar(select(User.password_hash).where(User.name == name))
    if stored is None:
        return False
    try:
        return bool(_hasher.verify(stored, password))
    except VerificationError:
        return False
