"""API tokens: issue one, list a user's (with their last use), revoke them.

A user lists and revokes their own tokens; an organizer anyone's. Revoking takes every token
of the user at once (a token that leaked may have been used to make no other, but the user
cannot tell which one leaked). A new token comes from ``proctor token new USER`` on the data
folder (as ``user add``) or from an organizer through REST; it is shown once and stored only
as its sha256. Every token expires ``token_days`` after it was issued.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update

from proctor.errors import ForbiddenError, NotFoundError
from proctor.services.platform.accounts import Principal, digest_of, expires_at
from proctor.services.platform.quota import iso
from proctor.services.platform.resources import Platform
from proctor.store.models import ApiToken, User


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A new token (shown once) and when it expires (epoch s)."""

    user: str
    token: str
    expires: float

    def to_json(self) -> dict[str, Any]:
        """``{"user", "token", "expires"}`` (``expires`` in ISO 8601, UTC)."""
        return {"user": self.user, "token": self.token, "expires": iso(self.expires)}


def _target(principal: Principal, user: str | None) -> str:
    """The user whose tokens are meant: the caller's own, or anyone's for an organizer."""
    if user is None or user == principal.name:
        return principal.name
    if not principal.organizer:
        raise ForbiddenError("you may see and revoke only your own tokens (organizers: anyone's)")
    return user


def _user_id(platform: Platform, name: str) -> int:
    with platform.db() as session:
        found = session.scalar(select(User.id).where(User.name == name))
    if found is None:
        raise NotFoundError(f"no user {name!r}")
    return found


def issue(platform: Platform, user: str, *, actor: str = "operator") -> IssuedToken:
    """A new API token for ``user`` (their other tokens keep working until revoked)."""
    user_id = _user_id(platform, user)
    token, now = secrets.token_urlsafe(32), time.time()
    with platform.db.begin() as session:
        session.add(ApiToken(user_id=user_id, digest=digest_of(token), created=now))
    platform.audit(actor, "token.new", user)
    return IssuedToken(user, token, expires_at(now, platform.settings.token_days))


def issue_for(platform: Platform, principal: Principal, user: str) -> IssuedToken:
    """An organizer issues ``user`` a new token (through REST)."""
    if not principal.organizer:
        raise ForbiddenError("only organizers issue tokens: ask one for a new token")
    return issue(platform, user, actor=principal.name)


def revoke(platform: Platform, principal: Principal, user: str | None = None) -> dict[str, Any]:
    """Revoke every token of ``user`` (the caller by default): ``{"user", "revoked": n}``."""
    name = _target(principal, user)
    user_id = _user_id(platform, name)
    with platform.db.begin() as session:
        done = session.execute(
            update(ApiToken)
            .where(ApiToken.user_id == user_id, ApiToken.revoked.is_(False))
            .values(revoked=True)
            .execution_options(synchronize_session=False)
        )
        count = int(getattr(done, "rowcount", 0))
    platform.audit(principal.name, "token.revoke", name, f"tokens={count}")
    return {"user": name, "revoked": count}


def listing(platform: Platform, principal: Principal, user: str | None = None) -> dict[str, Any]:
    """``{"user", "tokens": [...]}``: each token of the user, oldest first (see ``describe``)."""
    name = _target(principal, user)
    user_id = _user_id(platform, name)
    with platform.db() as session:
        rows = list(
            session.scalars(
                select(ApiToken).where(ApiToken.user_id == user_id).order_by(ApiToken.id)
            )
        )
    days = platform.settings.token_days
    return {"user": name, "tokens": [describe(row, principal, days) for row in rows]}


def describe(row: ApiToken, principal: Principal, token_days: float) -> dict[str, Any]:
    """``{"id", "created", "expires", "last_used", "revoked", "expired", "current"}``.

    Times in ISO 8601 (UTC), ``last_used`` None when never used (recorded to the minute);
    ``current``: the token this request was made with.
    """
    expires = expires_at(row.created, token_days)
    return {
        "id": row.id,
        "created": iso(row.created),
        "expires": iso(expires),
        "last_used": iso(row.last_used) if row.last_used is not None else None,
        "revoked": row.revoked,
        "expired": time.time() >= expires,
        "current": row.id == principal.token_id,
    }


def current(platform: Platform, principal: Principal) -> dict[str, Any] | None:
    """The token the caller asked with, described (``describe``); None if unknown."""
    if principal.token_id is None:
        return None
    with platform.db() as session:
        row = session.get(ApiToken, principal.token_id)
    return describe(row, principal, platform.settings.token_days) if row is not None else None
