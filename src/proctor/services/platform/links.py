"""Links sent by mail: signed, single use, and expiring (``verify``: 24 h, ``reset``: 1 h).

A link's token is ``itsdangerous``' timed signature, keyed by a secret of the server (made on
first use and kept in the database, so every server process shares it), over the user's id
and a random nonce. The nonce's sha256 is a ``MailLink`` row: using the link marks the row
used in one conditional update, so a second use (or a race of two) finds nothing. Making a
new link of a purpose ends the user's unused ones of that purpose. A token that is forged,
altered, too old, of another purpose, used or replaced is refused with one message
(``LinkError``) that says to ask for a new link.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from types import MappingProxyType

from itsdangerous import BadData, URLSafeTimedSerializer
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from proctor.errors import UsageError
from proctor.services.platform.accounts import digest_of
from proctor.services.platform.resources import Platform
from proctor.store.models import MailLink, ServerKey

LIFETIMES_S: Mapping[str, float] = MappingProxyType({"verify": 24 * 3600.0, "reset": 3600.0})
"""How long a link of each purpose works, in seconds."""
KEY_NAME = "mail-links"


class LinkError(UsageError):
    """A link is not valid: forged, expired, already used or replaced by a newer one."""


def _secret(platform: Platform) -> str:
    """The server's signing key, made and stored on first use (a race keeps the first)."""
    with platform.db() as session:
        found = session.scalar(select(ServerKey.value).where(ServerKey.name == KEY_NAME))
    if found is not None:
        return found
    try:
        with platform.db.begin() as session:
            session.add(
                ServerKey(name=KEY_NAME, value=secrets.token_urlsafe(48), created=time.time())
            )
    except IntegrityError:
        pass
    return _secret(platform)


def _signer(platform: Platform, purpose: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(_secret(platform), salt=f"proctor-{purpose}")


def make(platform: Platform, user_id: int, purpose: str) -> str:
    """A new token of ``purpose`` for user ``user_id`` (their unused ones of it end)."""
    nonce, now = secrets.token_urlsafe(24), time.time()
    with platform.db.begin() as session:
        session.execute(
            update(MailLink)
            .where(
                MailLink.user_id == user_id, MailLink.purpose == purpose, MailLink.used.is_(None)
            )
            .values(used=now)
        )
        session.add(
            MailLink(user_id=user_id, purpose=purpose, digest=digest_of(nonce), created=now)
        )
    return str(_signer(platform, purpose).dumps([user_id, nonce]))


def peek(platform: Platform, token: str, purpose: str) -> int:
    """The user id of a valid, unused token of ``purpose`` (not marked); else ``LinkError``."""
    user_id, nonce = _read(platform, token, purpose)
    with platform.db() as session:
        row = session.scalar(select(MailLink).where(MailLink.digest == digest_of(nonce)))
    if not _fresh(row, user_id, purpose):
        raise _refused(purpose)
    return user_id


def use(platform: Platform, token: str, purpose: str) -> int:
    """Mark a valid token of ``purpose`` used and return its user id; else ``LinkError``."""
    user_id, nonce = _read(platform, token, purpose)
    oldest = time.time() - LIFETIMES_S[purpose]
    with platform.db.begin() as session:
        done = session.execute(
            update(MailLink)
            .where(
                MailLink.digest == digest_of(nonce),
                MailLink.user_id == user_id,
                MailLink.purpose == purpose,
                MailLink.used.is_(None),
                MailLink.created > oldest,
            )
            .values(used=time.time())
            .execution_options(synchronize_session=False)
        )
        if getattr(done, "rowcount", 0) != 1:
            raise _refused(purpose)
    return user_id


def _read(platform: Platform, token: str, purpose: str) -> tuple[int, str]:
    """The user id and nonce a token signs, if its signature and age are good."""
    try:
        user_id, nonce = _signer(platform, purpose).loads(token, max_age=int(LIFETIMES_S[purpose]))
    except (BadData, TypeError, ValueError):
        raise _refused(purpose) from None
    if not isinstance(user_id, int) or not isinstance(nonce, str):
        raise _refused(purpose)
    return user_id, nonce


def _fresh(row: MailLink | None, user_id: int, purpose: str) -> bool:
    if row is None or row.used is not None or row.user_id != user_id or row.purpose != purpose:
        return False
    return time.time() - row.created < LIFETIMES_S[purpose]


def _refused(purpose: str) -> LinkError:
    hours = "24 hours" if purpose == "verify" else "1 hour"
    again = "sign up again" if purpose == "verify" else "ask for a new password reset"
    return LinkError(
        f"this link is not valid: it was used already, replaced by a newer one, or is older "
        f"than {hours}; {again} to get a new one"
    )
