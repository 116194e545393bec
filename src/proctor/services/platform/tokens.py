"""API tokens: issue one, list a user's (with their last use), revoke them.

A user lists and revokes their own tokens; an organizer anyone's. Revoking takes every token of
the user at once (a token that leaked may have been used to make no other, but the user cannot
tell which one leaked); the account page's ``revoke_one`` takes one. A new token comes from
``proctor token new USER`` on the data folder (as ``user add``) or from an organizer through
REST; it is shown once and stored only as its sha256. Every token expires ``token_days`` after
it was issued.
"""

from __future__ import annotations

import secrets
import time

from sqlalchemy import select, update

from proctor.errors import ForbiddenError, NotFoundError
from proctor.services.platform.accounts import Principal, digest_of, expires_at
from proctor.services.platform.answers import (
    IssuedToken,
    Revoked,
    TokenInfo,
    TokenList,
)
from proctor.services.platform.quota import iso
from proctor.services.platform.resources import Platform
from proctor.store.models import ApiToken, User


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
    expires = expires_at(now, platform.settings.token_days)
    return IssuedToken(user=user, token=token, expires=iso(expires))


def issue_for(platform: Platform, principal: Principal, user: str) -> IssuedToken:
    """An organizer issues ``user`` a new token (through REST)."""
    if not principal.organizer:
        raise ForbiddenError("only organizers issue tokens: ask one for a new token")
    return issue(platform, user, actor=principal.name)


def revoke(platform: Platform, principal: Principal, user: str | None = None) -> Revoked:
    """Revoke every token of ``user`` (the caller by default): how many it took."""
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
    return Revoked(user=name, revoked=count)


def revoke_one(platform: Platform, principal: Principal, token_id: int) -> Revoked:
    """Revoke one token of the caller's own (the account page's "revoke"); 404 for another's."""
    with platform.db.begin() as session:
        done = session.execute(
            update(ApiToken)
            .where(
                ApiToken.id == token_id,
                ApiToken.user_id == principal.user_id,
                ApiToken.revoked.is_(False),
            )
            .values(revoked=True)
            .execution_options(synchronize_session=False)
        )
        count = int(getattr(done, "rowcount", 0))
    if count == 0:
        raise NotFoundError(f"you have no token {token_id} that works: reload the page")
    platform.audit(principal.name, "token.revoke", principal.name, f"token={token_id}")
    return Revoked(user=principal.name, revoked=count)


def listing(platform: Platform, principal: Principal, user: str | None = None) -> TokenList:
    """Each token of the user (the caller by default), oldest first (see ``describe``)."""
    name = _target(principal, user)
    user_id = _user_id(platform, name)
    with platform.db() as session:
        rows = list(
            session.scalars(
                select(ApiToken).where(ApiToken.user_id == user_id).order_by(ApiToken.id)
            )
        )
    days = platform.settings.token_days
    return TokenList(user=name, tokens=[describe(row, principal, days) for row in rows])


def describe(row: ApiToken, principal: Principal, token_days: float) -> TokenInfo:
    """The token of ``row`` as ``principal`` sees it (``current``: the one they asked with)."""
    expires = expires_at(row.created, token_days)
    return TokenInfo(
        id=row.id,
        created=iso(row.created),
        expires=iso(expires),
        last_used=iso(row.last_used) if row.last_used is not None else None,
        revoked=row.revoked,
        expired=time.time() >= expires,
        current=row.id == principal.token_id,
    )


def current(platform: Platform, principal: Principal) -> TokenInfo | None:
    """The token the caller asked with, described (``describe``); None if unknown."""
    if principal.token_id is None:
        return None
    with platform.db() as session:
        row = session.get(ApiToken, principal.token_id)
    return describe(row, principal, platform.settings.token_days) if row is not None else None
