"""Claim a sandbox slot (an unprivileged uid) that no other evaluation on this host holds.

Slots are exclusive ``flock`` locks on files in one folder (``Settings.slot_locks``), so they are
released by the kernel when a holder dies: a crashed worker never leaks its slot. Entering
``Sandbox.session()`` claims one; nothing else needs to.

Free slots are tried in random order: a run can see its slot uid (it owns bubblewrap's own
tmpfs mounts, and the kernel prints that owner in host terms in ``/proc/self/mountinfo``), and
with first-free claiming the number would tell how many evaluations were running at once.

As root, a slot is also held by its uid, in one folder of the host whatever the slot folder
(``UID_LOCKS``): processes configured with different ``PROCTOR_SLOT_LOCKS`` (another
deployment, a local run) never run two evaluations as one uid, which could signal, trace or
read each other's processes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path

from proctor.errors import PlatformError

SLOT_COUNT = 64
UID_LOCKS = Path("/run/lock/proctor-uids")
"""Where slot uids are held, for every process of the host (as root)."""


@contextlib.contextmanager
def claim_slot(
    lock_dir: Path,
    *,
    count: int = SLOT_COUNT,
    uid_of: Callable[[int], int] | None = None,
    uid_locks: Path = UID_LOCKS,
) -> Iterator[int]:
    """Hold a free slot number in ``0..count-1``, picked at random, for the block.

    ``uid_of``: the uid a slot runs as; the slot is free only when that uid is free too
    (a lock in ``uid_locks``, shared by every slot folder of the host).
    """
    lock_dir.mkdir(parents=True, exist_ok=True)
    if uid_of is not None:
        uid_locks.mkdir(mode=0o700, parents=True, exist_ok=True)
    for slot in random.SystemRandom().sample(range(count), count):
        by_number = _try_lock(lock_dir / f"slot-{slot}.lock")
        if by_number is None:
            continue
        held = [by_number]
        if uid_of is not None:
            by_uid = _try_lock(uid_locks / f"uid-{uid_of(slot)}.lock")
            if by_uid is None:
                os.close(by_number)
                continue
            held.append(by_uid)
        try:
            yield slot
        finally:
            for fd in held:
                os.close(fd)  # closing the only descriptor releases its lock
        return
    raise PlatformError(
        f"all {count} sandbox slots in {lock_dir} are busy (or their uids are held by other "
        f"processes of this host, {uid_locks}): wait for a run to end or raise the count"
    )


def _try_lock(path: Path) -> int | None:
    """An open descriptor holding ``path``'s exclusive lock, or None if someone holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd
