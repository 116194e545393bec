"""Signing in with a name or email and a password, and resetting a forgotten password by mail.

A wrong login or password gets one answer, whether or not the account exists, and takes the
same time (``passwords.matches``). Only a failed sign-in counts against its limits
(``throttle``: per client address and per login typed). With the right password, an
account is still refused while its email is unconfirmed, while it waits for an organizer's
approval, or once disabled, and the message says which.

A reset request mails the address a link (1 hour, ``links``) when an account has it, and a
note saying no account has it otherwise; the answer is the same. Setting the new password
uses the link up, confirms the email (the mail reached its owner), and ends every browser
session of the account; its API tokens keep working (revoke them on the account page).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import select

from proctor.errors import AuthenticationError
from proctor.services.platform import links, mail, passwords, sessions
from proctor.services.platform.resources import Platform
from proctor.services.platform.signup import MailSent, email_address
from proctor.services.platform.throttle import Attempt
from proctor.store.models import User

WRONG = "the name or email, or the password, is not right: try again, or reset the password"
RESET_SENT = (
    "If an account has this address, a link to choose a new password is on its way: "
    "open it within 1 hour."
)


@dataclass(frozen=True, slots=True)
class SignedIn:
    """A browser signed in: the user, and the session cookie's value (shown once)."""

    user: str
    cookie: str


def _find(platform: Platform, login: str) -> User | None:
    """The account a login names: an email (it holds ``@``) or a user name."""
    login = login.strip()
    column = User.email if "@" in login else User.name
    key = login.lower() if "@" in login else login
    with platform.db() as session:
        return session.scalar(select(User).where(column == key))


def sign_in(platform: Platform, login: str, password: str, address: str) -> SignedIn:
    """Sign in from client ``address`` with ``login`` (name or email) and ``password``."""
    attempt = Attempt("signin", address, login)
    platform.throttle.check(attempt)
    user = _find(platform, login)
    if not passwords.matches(user.password_hash if user else None, password) or user is None:
        platform.throttle.count(attempt)
        raise AuthenticationError(WRONG)
    if user.disabled:
        raise AuthenticationError(f"user {user.name!r} is disabled: ask an organizer")
    if user.email is not None and user.email_verified is None:
        raise AuthenticationError(
            "confirm your email first: open the link we mailed you (it works for 24 hours; "
            "after that, sign up again)"
        )
    if user.approval == "pending":
        raise AuthenticationError(
            "your account waits for an organizer's approval: you will get a mail"
        )
    cookie = sessions.open_session(platform, user.id)
    platform.audit(user.name, "web.login", user.name, "password")
    return SignedIn(user=user.name, cookie=cookie)


def request_reset(platform: Platform, email: str, address: str) -> MailSent:
    """Mail ``email`` a link to choose a new password (or a note that no account has it)."""
    attempt = Attempt("reset", address, email)
    platform.throttle.check(attempt)
    email = email_address(email)
    platform.throttle.count(attempt)
    with platform.db() as session:
        user = session.scalar(select(User).where(User.email == email))
    base = platform.settings.public_url
    if user is None or user.disabled:
        mail.send_for_visitor(
            platform.settings,
            email,
            "Proctor password reset",
            f"Someone, we hope you, asked to reset the password of this address on Proctor "
            f"({base}), but no account has it.\n\nSign up: {base}/signup\n\n"
            "If it was not you, ignore this mail.\n",
        )
        return MailSent(RESET_SENT)
    token = links.make(platform, user.id, "reset")
    mail.send_for_visitor(
        platform.settings,
        email,
        "Choose a new Proctor password",
        f"Someone, we hope you, asked to reset the password of {user.name} on Proctor "
        f"({base}).\n\nChoose a new one within 1 hour:\n\n"
        f"{mail.link(platform.settings, f'/password-reset/new?t={token}')}\n\n"
        "If it was not you, ignore this mail: the password stays as it is.\n",
    )
    return MailSent(RESET_SENT)


def account_of_link(platform: Platform, token: str) -> str:
    """The name of the account a reset link is for (the link stays unused)."""
    user_id = links.peek(platform, token, "reset")
    with platform.db() as session:
        name = session.scalar(select(User.name).where(User.id == user_id))
    if name is None:
        raise links.LinkError("this link is not valid: ask for a new password reset")
    return name


def reset(platform: Platform, token: str, password: str) -> str:
    """Set the password of the reset link's account (the link is used up); the account's name."""
    passwords.check_new(password)
    user_id = links.use(platform, token, "reset")
    with platform.db.begin() as session:
        user = session.get(User, user_id)
        if user is None:
            raise links.LinkError("this link is not valid: ask for a new password reset")
        user.password_hash = passwords.hashed(password)
        user.email_verified = user.email_verified or time.time()
        name = user.name
    sessions.end_all(platform, user_id)
    platform.audit(name, "user.password_reset", name)
    return name
