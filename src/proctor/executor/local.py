"""The local executor: a pool of worker threads inside ``proctor serve``, and the reaper.

Each worker loops: lease the next job by the fair order (``store.fair_queue``: teams take turns,
a team with nothing running first, at most ``PROCTOR_TEAM_JOBS`` running per team), run it,
nudge the idle workers (a team under its cap again), repeat; when nothing may run it waits for
a nudge (a new submission, a job done) or ``reaper_s``. Tasks of one
submission are separate jobs, so free workers run them in parallel. One housekeeping thread
reaps expired leases every ``reaper_s`` and removes orphan artifacts every half grace period.
Workers started in the same process share a name prefix
(host and pid), so a restarted server reconciles what its predecessor left.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable

from proctor.executor.housekeeping import OrphanSweeps
from proctor.executor.run import run_next
from proctor.executor.runtime import WorkerRuntime
from proctor.store import jobs

log = logging.getLogger(__name__)
STOP_S = 60.0
"""How long a stopping pool waits for its cancelled jobs to unwind before releasing by force."""


def worker_name(index: int) -> str:
    """A worker id unique on this host and process: ``HOST:PID:INDEX``."""
    return f"{socket.gethostname()}:{os.getpid()}:{index}"


class LocalPool:
    """``size`` worker threads running jobs from the database queue, and a reaper thread."""

    def __init__(
        self,
        runtime: WorkerRuntime,
        size: int,
        run: Callable[[str, WorkerRuntime], bool] = run_next,
    ) -> None:
        self.runtime, self.size, self._run = runtime, max(1, size), run
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Start the workers and the reaper."""
        for index in range(self.size):
            thread = threading.Thread(
                target=self._work, args=(worker_name(index),), name=f"worker-{index}", daemon=True
            )
            self._threads.append(thread)
        self._threads.append(threading.Thread(target=self._reap, name="reaper", daemon=True))
        for thread in self._threads:
            thread.start()

    def nudge(self) -> None:
        """Wake idle workers: a job was queued."""
        with self._wake:
            self._wake.notify_all()

    def stop(self, timeout: float = STOP_S) -> None:
        """Stop taking jobs, cancel the running ones and release what they hold on the host.

        Cancelled jobs unwind (their runs killed, their mounts, loop devices and cgroups let
        go) within ``timeout`` seconds; whatever a job still holds after that is released
        by force. Their leases lapse and the reaper (or the next start) queues them again.
        """
        self._stop.set()
        self.runtime.stop()
        self.nudge()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self.runtime.sandbox.release_own()

    def _work(self, name: str) -> None:
        while not self._stop.is_set():
            try:
                busy = self._run(name, self.runtime)
            except Exception:
                log.exception("worker %s: a job raised; the reaper will return it", name)
                busy = False
            if busy:
                self.nudge()  # the job's team may be under its cap again
            else:
                with self._wake:
                    self._wake.wait(self.runtime.service.reaper_s)

    def _reap(self) -> None:
        service = self.runtime.service
        orphans = OrphanSweeps(self.runtime.db, self.runtime.artifacts, service.orphan_grace_s)
        while not self._stop.wait(service.reaper_s):
            try:
                if jobs.reap(self.runtime.db, service.max_attempts):
                    self.nudge()
                orphans.due()
            except Exception:
                log.exception("reaper failed; trying again in %s s", self.runtime.service.reaper_s)
