"""Rate limits of signing in, signing up and password resets, per client address and account.

Each action has two moving-window limits (``LIMITS``): one per client address, one per
account named in the form (the login, email or name as typed, whether or not it exists, so a
refusal tells nothing of which accounts exist). A sign-in counts only when it fails; every
sign-up and reset request counts, since each sends a mail. The counters are kept in this
process's memory (``limits``' memory storage): a restart forgets them, and two server
processes count apart.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from limits import RateLimitItem, parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

from proctor.errors import RefusedError

LIMITS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "signin": ("30/15minutes", "10/15minutes"),
        "signup": ("10/hour", "3/hour"),
        "reset": ("10/hour", "3/hour"),
    }
)
"""Per action: the limit per client address, then per account (``limits`` notation)."""


class TooManyAttemptsError(RefusedError):
    """Too many attempts of an action from one address or for one account; says when to retry."""

    kind = "too_many_attempts"


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt of ``action`` from client ``address`` for ``account`` (as typed)."""

    action: str
    address: str
    account: str


class Throttle:
    """The counters of one process; ``check`` before an attempt, ``count`` it when it counts."""

    def __init__(self, limits: Mapping[str, tuple[str, str]] = LIMITS) -> None:
        self.items: dict[str, tuple[RateLimitItem, RateLimitItem]] = {
            action: (parse(per_address), parse(per_account))
            for action, (per_address, per_account) in limits.items()
        }
        self._limiter: MovingWindowRateLimiter | None = None
        self._making = threading.Lock()

    @property
    def limiter(self) -> MovingWindowRateLimiter:
        """The counters, made on first use (the memory storage starts a timer thread)."""
        with self._making:
            if self._limiter is None:
                self._limiter = MovingWindowRateLimiter(MemoryStorage())
            return self._limiter

    def _keys(self, attempt: Attempt) -> list[tuple[RateLimitItem, str, str]]:
        per_address, per_account = self.items[attempt.action]
        account = attempt.account.strip().lower()
        return [
            (per_address, f"{attempt.action}:address", attempt.address),
            (per_account, f"{attempt.action}:account", account),
        ]

    def check(self, attempt: Attempt) -> None:
        """Refuse (``TooManyAttemptsError``) when either limit of ``attempt`` is used up."""
        for item, scope, key in self._keys(attempt):
            if not self.limiter.test(item, scope, key):
                reset_at, _ = self.limiter.get_window_stats(item, scope, key)
                minutes = max(1, round((reset_at - time.time()) / 60))
                raise TooManyAttemptsError(
                    f"too many attempts to {_WORDS[attempt.action]} from here or for this "
                    f"account: try again in {minutes} minute{'s' if minutes != 1 else ''}"
                )

    def count(self, attempt: Attempt) -> None:
        """Count ``attempt`` against both of its limits."""
        for item, scope, key in self._keys(attempt):
            self.limiter.hit(item, scope, key)


_WORDS = {"signin": "sign in", "signup": "sign up", "reset": "reset a password"}
