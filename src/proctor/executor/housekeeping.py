"""What workers clean up: leases of dead workers on this host, stale run folders, orphans.

A starting worker runs :func:`reconcile_host`; the reaper of a running executor (the local
pool's, every Celery :class:`~proctor.executor.upkeep.Upkeep`) also sweeps orphan artifacts
(:class:`OrphanSweeps`) every half grace period.
"""

from __future__ import annotations

import logging
import re
import socket
import time
from pathlib import Path

from sqlalchemy import select

from proctor.host import pid_alive
from proctor.store import jobs
from proctor.store.artifacts import ArtifactStore
from proctor.store.models import Job
from proctor.store.orphans import sweep_orphans
from proctor.store.runfolder import PARTIAL, in_use
from proctor.trees import remove_tree_quietly
from proctor.types import JobState

_RUN = re.compile(r"^job-(\d+)-a(\d+)-")
log = logging.getLogger(__name__)


def reconcile_host(
    db: jobs.Database, work_root: Path, artifacts: ArtifactStore, grace_s: float
) -> list[int]:
    """Re-queue jobs held by dead workers of this host; remove run folders no job is using.

    Artifacts no row refers to, older than ``grace_s``, are removed too.
    """
    taken = jobs.reconcile_dead(db, socket.gethostname(), pid_alive)
    if taken:
        jobs.reap(db, max_attempts=1_000_000)  # back to the queue now; the attempt counted
    _remove_stale_folders(db, work_root)
    sweep_orphans(db, artifacts, grace_s)
    return taken


class OrphanSweeps:
    """Sweeps orphan artifacts when :meth:`due`: at most once every half grace period."""

    def __init__(self, db: jobs.Database, artifacts: ArtifactStore, grace_s: float) -> None:
        self.db, self.artifacts, self.grace_s = db, artifacts, grace_s
        self._last = time.monotonic()

    def due(self) -> None:
        """Sweep if the last sweep is half a grace period old (errors are logged)."""
        if time.monotonic() - self._last < self.grace_s / 2:
            return
        self._last = time.monotonic()
        try:
            removed = sweep_orphans(self.db, self.artifacts, self.grace_s)
        except OSError:
            log.exception("the orphan artifact sweep failed; trying again later")
            return
        if removed:
            log.info("removed %d artifacts no row refers to", len(removed))


def _remove_stale_folders(db: jobs.Database, work_root: Path) -> None:
    """Remove job run folders that no running job of ``db`` and no live process uses.

    The work root may be shared with other processes (``proctor run``, another deployment's
    workers): a folder is removed only when no process holds its lock (``in_use``).
    """
    if not work_root.is_dir():
        return
    with db() as session:
        running = session.execute(select(Job.id, Job.attempt).where(Job.state == JobState.RUNNING))
        live = {(job_id, attempt) for job_id, attempt in running}
    for folder in work_root.glob(f"job-*{PARTIAL}"):
        match = _RUN.match(folder.name)
        if match and (int(match[1]), int(match[2])) not in live and not in_use(folder):
            remove_tree_quietly(folder)
