"""What a starting worker cleans up: leases of dead workers on this host, stale run folders."""

from __future__ import annotations

import re
import socket
from pathlib import Path

from sqlalchemy import select

from proctor.host import pid_alive
from proctor.store import jobs
from proctor.store.models import Job
from proctor.store.runfolder import PARTIAL
from proctor.trees import remove_tree_quietly
from proctor.types import JobState

_RUN = re.compile(r"^job-(\d+)-a(\d+)-")


def reconcile_host(db: jobs.Database, work_root: Path) -> list[int]:
    """Re-queue jobs held by dead workers of this host; remove run folders no job is using."""
    taken = jobs.reconcile_dead(db, socket.gethostname(), pid_alive)
    if taken:
        jobs.reap(db, max_attempts=1_000_000)  # back to the queue now; the attempt counted
    _remove_stale_folders(db, work_root)
    return taken


def _remove_stale_folders(db: jobs.Database, work_root: Path) -> None:
    if not work_root.is_dir():
        return
    with db() as session:
        live = set(session.execute(
            select(Job.id, Job.attempt).where(Job.state == JobState.RUNNING)).tuples())  # fmt: skip
    for folder in work_root.glob(f"job-*{PARTIAL}"):
        match = _RUN.match(folder.name)
        if match and (int(match[1]), int(match[2])) not in live:
            remove_tree_quietly(folder)
