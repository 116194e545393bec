"""Helpers shared by the sandbox tests: fast limits, snippet runners, host process probes."""

from __future__ import annotations

import os
import textwrap
import time
from collections.abc import Callable, Sequence

from proctor.host import process_files
from proctor.sandbox.base import Limits, MiB, Mount, Outcome, RunSpec
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.runs import RunGroup
from proctor.sandbox.session import SessionSandbox

FAST = Limits(
    wall_s=10.0,
    memory_bytes=256 * MiB,
    processes=32,
    open_files=64,
    tmp_bytes=16 * MiB,
    shm_bytes=8 * MiB,
    log_bytes=64 * 1024,
)


def _worker_uid_offset() -> int:
    """10,000 uids apart per pytest-xdist worker (``gw1``: +10,000), so parallel workers never
    run sandboxes as one uid (RLIMIT_NPROC and uid-wide kills are per uid)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return 10_000 * int(worker[2:]) if worker[2:].isdigit() else 0


WORKER_UID_OFFSET = _worker_uid_offset()
SLOT_BASE = 63000 + WORKER_UID_OFFSET
"""Explicit-slot test runs use uids a real evaluation (61000 and up) never does."""
EVALUATION_UID_BASE = 61000 + WORKER_UID_OFFSET
"""``PROCTOR_SLOT_UID_BASE`` of this worker's evaluations (``conftest`` sets it)."""


def run_as_slot(sandbox: SessionSandbox, spec: RunSpec, *, slot: int = 0) -> Outcome:
    """Run ``spec`` as ``slot`` outside any session (the test holds the slot by its own means).

    Proctor itself runs only in sessions (``Sandbox.session``); ``cancel_all`` does not reach
    these runs.
    """
    return sandbox.run_in_group(RunGroup(), spec, slot=slot)


def run_py(
    sandbox: BwrapSandbox,
    code: str,
    *,
    limits: Limits = FAST,
    mounts: Sequence[Mount] = (),
    slot: int = 0,
    env: dict[str, str] | None = None,
) -> Outcome:
    """Run a Python snippet (dedented) with the system python inside the sandbox."""
    return run_as_slot(
        sandbox,
        RunSpec(["python3", "-c", textwrap.dedent(code)], mounts, limits, env or {}),
        slot=slot,
    )


def run_sh(sandbox: BwrapSandbox, script: str, *, limits: Limits = FAST, slot: int = 0) -> Outcome:
    """Run a shell script inside the sandbox."""
    return run_as_slot(
        sandbox, RunSpec(["/bin/sh", "-c", script], mounts=(), limits=limits), slot=slot
    )


def pids_of_uid(uid: int) -> list[int]:
    """Host pids whose real uid is ``uid``."""
    found = []
    for pid, status in process_files("status"):
        for line in status.splitlines():
            if line.startswith("Uid:") and int(line.split()[1]) == uid:
                found.append(pid)
    return found


def wait_until(predicate: Callable[[], bool], timeout_s: float) -> bool:
    """Poll ``predicate()`` until true or ``timeout_s`` passed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def is_root() -> bool:
    return os.geteuid() == 0
