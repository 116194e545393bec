"""Browsers signed in with a password: a session per sign-in, ended on sign-out.

The session cookie holds ``s.`` and a random secret (stored as its sha256), or an API token
for a browser signed in with one (``token`` field of the sign-in form; a token never holds a
dot). ``who`` is the user of either kind of cookie. A session expires ``SESSION_DAYS`` after
it was made, and ends on sign-out, a password reset, or when the user is disabled
(``end_all``); a disabled user is refused at once in any case.
"""

from __future__ import annotations

import secrets
import time

from sqlalchemy import select, update

from proctor.errors import AuthenticationError
from proctor.services.platform.accounts import Principal, authenticate, digest_of
from proctor.services.platform.resources import Platform
from proctor.store.models import Membership, Team, User, WebSession

SESSION_DAYS = 30
PREFIX = "s."


def open_session(platform: Platform, user_id: int) -> str:
    """A new session of user ``user_id``: the cookie's value (shown once, stored hashed)."""
    secret = PREFIX + secrets.token_urlsafe(32)
    with platform.db.begin() as session:
        session.add(WebSession(user_id=user_id, digest=digest_of(secret), created=time.time()))
    return secret


def who(platform: Platform, cookie: str | None) -> Principal:
    """The user of a session cookie (a session or an API token); ``AuthenticationError`` else."""
    if not cookie or not cookie.startswith(PREFIX):
        return authenticate(platform, cookie)
    oldest = time.time() - SESSION_DAYS * 86400
    with platform.db() as session:
        row = session.execute(
            select(User, Membership.team_id, Team.name)
            .join(WebSession, WebSession.user_id == User.id)
            .outerjoin(Membership, Membership.user_id == User.id)
            .outerjoin(Team, Team.id == Membership.team_id)
            .where(
                WebSession.digest == digest_of(cookie),
                WebSession.ended.is_(None),
                WebSession.created > oldest,
            )
        ).first()
    if row is None:
        raise AuthenticationError("this browser's session ended: sign in again")
    user, team_id, team = row
    if user.disabled:
        raise AuthenticationError(f"user {user.name!r} is disabled: ask an organizer")
    return Principal(user.id, user.name, user.role, team_id, team)


def end(platform: Platform, cookie: str | None) -> None:
    """End the session of ``cookie`` (nothing for an API token: the CLI keeps it)."""
    if not cookie or not cookie.startswith(PREFIX):
        return
    with platform.db.begin() as session:
        session.execute(
            update(WebSession)
            .where(WebSession.digest == digest_of(cookie), WebSession.ended.is_(None))
            .values(ended=time.time())
        )


def end_all(platform: Platform, user_id: int) -> None:
    """End every session of user ``user_id`` (a password reset, the user disabled)."""
    with platform.db.begin() as session:
        session.execute(
            update(WebSession)
            .where(WebSession.user_id == user_id, WebSession.ended.is_(None))
            .values(ended=time.time())
        )
