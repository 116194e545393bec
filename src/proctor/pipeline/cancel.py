"""Cancelling one job from outside, without touching any other job of the same worker."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from proctor.errors import JobCancelledError


class CancelToken:
    """A flag a face or an executor sets to stop one job; the job's sandbox session listens.

    ``cancel()`` may be called from any thread, at any time, any number of times.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        """True once ``cancel`` was called."""
        return self._event.is_set()

    def cancel(self) -> None:
        """Stop the job: kill what it runs now and start nothing more."""
        with self._lock:
            self._event.set()
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    @contextlib.contextmanager
    def listening(self, listener: Callable[[], None]) -> Iterator[None]:
        """Call ``listener`` on cancel while inside the block (at once if already cancelled)."""
        with self._lock:
            self._listeners.append(listener)
            already = self._event.is_set()
        try:
            if already:
                listener()
            yield
        finally:
            with self._lock:
                self._listeners.remove(listener)

    def check(self) -> None:
        """Raise ``JobCancelledError`` when the job was cancelled."""
        if self._event.is_set():
            raise JobCancelledError("the evaluation was cancelled")
