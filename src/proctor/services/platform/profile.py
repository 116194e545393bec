"""A person's own account: what the account page shows, their API tokens, their mail switch.

A person makes API tokens for the CLI (each shown once) and revokes them one by one
(``tokens``); the switch ``notify_finished`` says whether they get a mail when a submission of
theirs finishes (``finished_mail_to`` tells the sender where, if anywhere).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from proctor.errors import NotFoundError
from proctor.services.platform import tokens
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import TokenInfo
from proctor.services.platform.resources import Platform
from proctor.store.models import User


@dataclass(frozen=True, slots=True)
class Account:
    """The account page: who, their email, the mail switch, and their API tokens."""

    user: str
    role: str
    team: str | None
    email: str | None
    notify_finished: bool
    tokens: list[TokenInfo]


def account(platform: Platform, principal: Principal) -> Account:
    """The signed-in person's account as their account page shows it."""
    with platform.db() as session:
        user = session.get(User, principal.user_id)
    if user is None:
        raise NotFoundError(f"no user {principal.name!r}")
    held = tokens.listing(platform, principal).tokens
    return Account(
        user=user.name,
        role=user.role,
        team=principal.team,
        email=user.email,
        notify_finished=user.notify_finished,
        tokens=[token for token in held if not token.revoked and not token.expired],
    )


def set_notify_finished(platform: Platform, principal: Principal, on: bool) -> None:
    """Switch the "email me when a submission finishes" mail of the signed-in person."""
    with platform.db.begin() as session:
        user = session.get(User, principal.user_id)
        if user is None:
            raise NotFoundError(f"no user {principal.name!r}")
        user.notify_finished = on
    platform.audit(principal.name, "user.notify_finished", principal.name, "on" if on else "off")


def finished_mail_to(platform: Platform, user: str) -> str | None:
    """Where to mail ``user`` that a submission finished, if anywhere.

    Their confirmed email if their switch is on; None without an email, unconfirmed,
    switched off, or disabled.
    """
    with platform.db() as session:
        found = session.scalar(select(User).where(User.name == user))
    if found is None or found.disabled or not found.notify_finished:
        return None
    return found.email if found.email_verified is not None else None
