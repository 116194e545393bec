"""A group of runs that are cancelled together: the runs of one session.

A run joins its group by the function that kills it, once it exists (a launched process tree,
a fake run's event) and leaves when it has ended. ``cancel`` marks the group and kills every
member; a run that joins a cancelled group is killed as it joins. The mark and the membership
share one lock, so a run launching while ``cancel`` is called is either among the members
killed or sees the mark: none escapes.

Example::

    runs = RunGroup()
    runs.join(kill)        # kill() is called at once if runs.cancel() came first
    try:
        ...                # wait for the run
    finally:
        runs.leave(kill)
"""

from __future__ import annotations

import threading
from collections.abc import Callable

Kill = Callable[[], None]


class RunGroup:
    """The runs under way of one session (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kills: set[Kill] = set()
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        """True once ``cancel`` was called; a cancelled group stays cancelled."""
        return self._cancelled

    def join(self, kill: Kill) -> None:
        """Add a run by its kill function; kill it now if the group is already cancelled."""
        with self._lock:
            self._kills.add(kill)
            if self._cancelled:
                kill()

    def leave(self, kill: Kill) -> None:
        """Remove a run that has ended (after this, ``cancel`` no longer kills it)."""
        with self._lock:
            self._kills.discard(kill)

    def cancel(self) -> None:
        """Kill every member now and every run that joins later."""
        with self._lock:
            self._cancelled = True
            self._kill_members()

    def kill_running(self) -> None:
        """Kill the members under way now, without cancelling the runs that join later."""
        with self._lock:
            self._kill_members()

    def _kill_members(self) -> None:
        # Under the lock: a member that is leaving waits, so nothing is killed after it ended.
        for kill in list(self._kills):
            kill()
