"""Upkeep of a brokered queue: reap expired leases, then send the jobs no broker has seen.

The ``celery`` executor runs one :class:`Upkeep` in ``proctor serve`` and one in every
``proctor worker``: each pass is a few conditional writes (``jobs.reap``, ``jobs.sweep``), so any
number of them may run at once, and the queue keeps moving while the server is down. Every half
grace period a pass also removes orphan artifacts (``store.orphans``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from proctor.executor.housekeeping import OrphanSweeps
from proctor.settings import ServiceSettings
from proctor.store import jobs
from proctor.store.artifacts import ArtifactStore

log = logging.getLogger(__name__)


class Upkeep:
    """A thread that reaps and sweeps every ``reaper_s``; :meth:`sweep_now` on new jobs."""

    def __init__(
        self, db: jobs.Database, service: ServiceSettings, send: Callable[[int], None]
    ) -> None:
        self.db, self.service, self.send = db, service, send
        self.orphans = OrphanSweeps(db, ArtifactStore(service.artifacts), service.orphan_grace_s)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> None:
        """One pass: expired leases back to the queue (or failed), then the queue sent."""
        with self._lock:
            jobs.reap(self.db, self.service.max_attempts)
            jobs.sweep(self.db, self.send)
        self.orphans.due()

    def sweep_now(self) -> None:
        """Send the jobs just stored (a submission); failures wait for the next pass."""
        try:
            with self._lock:
                jobs.sweep(self.db, self.send)
        except Exception:
            log.exception("could not send new jobs to the broker; retrying every pass")

    def start(self) -> None:
        """Run :meth:`run_once` now and then every ``reaper_s`` in a daemon thread."""
        self._thread = threading.Thread(target=self._loop, name="upkeep", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread (a pass under way finishes first)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception:
                log.exception("upkeep failed; trying again in %s s", self.service.reaper_s)
            self._stop.wait(self.service.reaper_s)
