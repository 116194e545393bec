"""Claim a sandbox slot (an unprivileged uid) that no other evaluation on this host holds.

Slots are exclusive ``flock`` locks on files in one folder (``Settings.slot_locks``), so they are
released by the kernel when a holder dies: a crashed worker never leaks its slot. Entering
``Sandbox.session()`` claims one; nothing else needs to.

Free slots are tried in random order: a run can see its slot uid (it owns bubblewrap's own
tmpfs mounts, and the kernel prints that owner in host terms in ``/proc/self/mountinfo``), and
with first-free claiming the number would tell how many evaluations were running at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
from collections.abc import Iterator
from pathlib import Path

from proctor.errors import PlatformError

SLOT_COUNT = 64


@contextlib.contextmanager
def claim_slot(lock_dir: Path, *, count: int = SLOT_COUNT) -> Iterator[int]:
    """Hold a free slot number in ``0..count-1``, picked at random, for the block."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    for slot in random.SystemRandom().sample(range(count), count):
        fd = os.open(lock_dir / f"slot-{slot}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            yield slot
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        return
    raise PlatformError(
        f"all {count} sandbox slots in {lock_dir} are busy: "
        "wait for a run to end or raise the count"
    )
