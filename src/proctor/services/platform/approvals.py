"""Accounts waiting for an organizer under ``PROCTOR_SIGNUP=approval``: list, approve, deny.

Only accounts whose email is confirmed are listed (an organizer never approves an address
nobody has shown to own). Approving lets the person sign in; denying disables the account.
Either way the person gets a mail, and the audit log records who decided.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from proctor.errors import NotFoundError
from proctor.services.platform import mail
from proctor.services.platform.accounts import Principal
from proctor.services.platform.console import organizers_only
from proctor.services.platform.quota import iso
from proctor.services.platform.resources import Platform
from proctor.store.models import User

PENDING = "pending"


@dataclass(frozen=True, slots=True)
class PendingAccount:
    """An account waiting for approval: its name, email, and when it signed up (ISO 8601)."""

    user: str
    email: str
    created: str


def pending(platform: Platform, principal: Principal) -> list[PendingAccount]:
    """The confirmed accounts waiting for approval, oldest first (organizers)."""
    organizers_only(principal)
    with platform.db() as session:
        rows = session.scalars(
            select(User)
            .where(User.approval == PENDING, User.email_verified.is_not(None))
            .order_by(User.created)
        )
        return [PendingAccount(u.name, u.email or "", iso(u.created)) for u in rows]


def decide(platform: Platform, principal: Principal, name: str, *, approve: bool) -> str:
    """Approve or deny the waiting account ``name`` and mail its owner; the decision's word."""
    organizers_only(principal)
    with platform.db.begin() as session:
        user = session.scalar(select(User).where(User.name == name, User.approval == PENDING))
        if user is None or user.email is None or user.email_verified is None:
            raise NotFoundError(f"no account {name!r} waits for approval")
        user.approval = "approved" if approve else "denied"
        user.disabled = user.disabled or not approve
        email = user.email
    word = "approved" if approve else "denied"
    platform.audit(principal.name, f"user.{word}", name)
    base = platform.settings.public_url
    body = (
        f"Your account {name} on Proctor ({base}) was approved: sign in at {base}/login\n"
        if approve
        else f"Your account {name} on Proctor ({base}) was not approved. "
        "Reply to the organizers if you think this is a mistake.\n"
    )
    mail.send(platform.settings, email, f"Your Proctor account was {word}", body)
    return word
