"""Passwords: Argon2id hashes (``argon2-cffi``'s defaults), the rules a new one must meet.

``matches`` takes the same time whether or not the account exists (an unknown account is
checked against a hash of nothing), so the time of an answer tells nothing either.
"""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from proctor.errors import UsageError

MIN_CHARS = 8
MAX_CHARS = 1024
_hasher = PasswordHasher()
_NOBODY = _hasher.hash("no account has this password")


def hashed(password: str) -> str:
    """The Argon2id hash a password is stored as."""
    return _hasher.hash(password)


def matches(stored: str | None, password: str) -> bool:
    """True when ``password`` is the one hashed as ``stored`` (None: no account, or none set)."""
    try:
        return bool(_hasher.verify(stored or _NOBODY, password)) and stored is not None
    except (VerificationError, InvalidHashError):
        return False


def check_new(password: str) -> str:
    """``password`` if it may be chosen; else a ``UsageError`` saying the rule."""
    if not MIN_CHARS <= len(password) <= MAX_CHARS:
        raise UsageError(
            f"password: choose one of {MIN_CHARS} to {MAX_CHARS} characters "
            "(a few words make a good one)"
        )
    return password
