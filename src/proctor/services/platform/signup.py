"""Accounts people make themselves: sign up, confirm the email by a link, wait for approval.

Who may sign up is ``PROCTOR_SIGNUP``: ``closed`` (only organizers make accounts), ``open``
(a confirmed email is enough) or ``approval`` (an organizer approves too, ``approvals``).
Every sign-up sends one mail and gets the same answer, whatever accounts exist, so the form
tells nobody whether a name or an address is taken; the mail tells the address's owner:

- a new name and address: the link to confirm it (24 hours, ``links``);
- an address whose account is confirmed: that it has an account, and how to sign in or reset;
- an address whose account waits for confirmation: a new link for that account;
- a name taken by another account: to sign up again with another name.

An account whose link expired unconfirmed gives up its name and address to the next sign-up.
Sign-ups are rate-limited per client address and per address typed (``throttle``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import quote

from email_validator import EmailNotValidError, validate_email
from sqlalchemy import delete, or_, select

from proctor.errors import ForbiddenError, UsageError
from proctor.services.platform import links, mail, passwords
from proctor.services.platform.accounts import PARTICIPANT, check_name
from proctor.services.platform.resources import Platform
from proctor.services.platform.throttle import Attempt
from proctor.store.models import MailLink, User

SENT = (
    "Thank you. If this address can take a new account, a link to confirm it is on its way: "
    "open it within 24 hours. The mail says what to do in every other case."
)


@dataclass(frozen=True, slots=True)
class MailSent:
    """The answer of a form that sends a mail: the same words whatever accounts exist."""

    message: str


@dataclass(frozen=True, slots=True)
class Confirmed:
    """An email confirmed: the account, and whether it still waits for an organizer."""

    user: str
    waits_for_approval: bool


def email_address(text: str) -> str:
    """``text`` as a normalized email address (lower case); a ``UsageError`` if it is not one.

    Only the syntax is checked: no DNS look-up.
    """
    try:
        found = validate_email(text.strip(), check_deliverability=False)
    except EmailNotValidError as error:
        raise UsageError(f"email: {error}") from None
    return str(found.normalized).lower()


def sign_up(
    platform: Platform, name: str, email: str, password: str, address: str, *, then: str = "/"
) -> MailSent:
    """Sign up ``name`` with ``email`` and ``password`` from client ``address`` (see above).

    ``then``: the page of this site to come back to after signing in (the caller checked it is
    one); the confirmation link carries it as ``next``.
    """
    if platform.settings.signup == "closed":
        raise ForbiddenError("sign-up is closed on this server: ask an organizer for an account")
    attempt = Attempt("signup", address, email)
    platform.throttle.check(attempt)
    name = name.strip()
    check_name("user", name)
    email = email_address(email)
    passwords.check_new(password)
    platform.throttle.count(attempt)
    _forget_expired(platform, name, email)
    with platform.db() as session:
        holder = session.scalar(select(User).where(User.email == email))
        named = session.scalar(select(User).where(User.name == name))
    if holder is not None and holder.email_verified is not None:
        _mail_exists(platform, email, holder.name)
    elif holder is not None:
        _mail_confirm(platform, holder.id, holder.name, email, then)
    elif named is not None:
        _mail_name_taken(platform, email, name)
    else:
        _create(platform, name, email, password, then)
    return MailSent(SENT)


def _create(platform: Platform, name: str, email: str, password: str, then: str) -> None:
    """Add the account (unconfirmed) and mail the link that confirms it."""
    waits = "pending" if platform.settings.signup == "approval" else None
    with platform.db.begin() as session:
        user = User(
            name=name,
            role=PARTICIPANT,
            created=time.time(),
            password_hash=passwords.hashed(password),
            email=email,
            approval=waits,
        )
        session.add(user)
        session.flush()
        user_id = user.id
    platform.audit(name, "user.signup", name, f"email={email}")
    _mail_confirm(platform, user_id, name, email, then)


def _forget_expired(platform: Platform, name: str, email: str) -> None:
    """Remove an unconfirmed account holding ``name`` or ``email`` whose link expired."""
    expired = time.time() - links.LIFETIMES_S["verify"]
    with platform.db.begin() as session:
        stale = list(
            session.scalars(
                select(User.id).where(
                    or_(User.name == name, User.email == email),
                    User.email.is_not(None),
                    User.email_verified.is_(None),
                    User.created < expired,
                )
            )
        )
        if stale:
            session.execute(delete(MailLink).where(MailLink.user_id.in_(stale)))
            session.execute(delete(User).where(User.id.in_(stale)))


def _mail_confirm(platform: Platform, user_id: int, name: str, email: str, then: str) -> None:
    token = links.make(platform, user_id, "verify")
    back = "" if then == "/" else f"&next={quote(then, safe='')}"
    address = mail.link(platform.settings, f"/signup/verify?t={token}{back}")
    mail.send_for_visitor(
        platform.settings,
        email,
        "Confirm your email for Proctor",
        f"Someone, we hope you, signed up to Proctor ({platform.settings.public_url}) as "
        f"{name} with this address.\n\nTo confirm it, open this link within 24 hours:\n\n"
        f"{address}\n\nIf it was not you, ignore this mail: the account cannot be used "
        "without it.\n",
    )


def _mail_exists(platform: Platform, email: str, name: str) -> None:
    base = platform.settings.public_url
    mail.send_for_visitor(
        platform.settings,
        email,
        "Your Proctor account",
        f"Someone, we hope you, tried to sign up to Proctor ({base}) with this address, "
        f"which has an account already: {name}.\n\nSign in: {base}/login\n"
        f"Forgot the password? {base}/password-reset\n\nIf it was not you, ignore this mail.\n",
    )


def _mail_name_taken(platform: Platform, email: str, name: str) -> None:
    base = platform.settings.public_url
    mail.send_for_visitor(
        platform.settings,
        email,
        "Choose another name on Proctor",
        f"Someone, we hope you, tried to sign up to Proctor ({base}) with this address as "
        f"{name}, but another account has that name.\n\nSign up again with another name: "
        f"{base}/signup\n\nIf it was not you, ignore this mail.\n",
    )


def account_of_link(platform: Platform, token: str) -> str:
    """The name of the account a confirmation link is for (the link stays unused)."""
    user_id = links.peek(platform, token, "verify")
    with platform.db() as session:
        user = session.get(User, user_id)
    if user is None:
        raise links.LinkError("this link is not valid: sign up again to get a new one")
    return user.name


def confirm(platform: Platform, token: str) -> Confirmed:
    """Confirm the email of the link's account (the link is used up)."""
    user_id = links.use(platform, token, "verify")
    with platform.db.begin() as session:
        user = session.get(User, user_id)
        if user is None:
            raise links.LinkError("this link is not valid: sign up again to get a new one")
        if user.email_verified is None:
            user.email_verified = time.time()
        name, waits = user.name, user.approval == "pending"
    platform.audit(name, "user.confirm", name)
    return Confirmed(user=name, waits_for_approval=waits)
