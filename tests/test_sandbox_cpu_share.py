"""Hardening item 7: a run that spins many processes cannot starve a neighbouring run.

Every run is a session of its own (bwrap --new-session), and with the kernel's autogroup
scheduling each session is one scheduling entity, whatever it spawns inside. Where autogroup
is off, organizers set ``limits.cpus_per_case`` (a cgroup quota) instead.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from proctor.sandbox.base import Limits, MiB, Outcome
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings
from sandbox_helpers import SLOT_BASE

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
LIMITS = Limits(wall_s=20, memory_bytes=256 * MiB, processes=64)


def spin(count: int, seconds: float) -> list[str]:
    loops = " ".join("(while :; do :; done) &" for _ in range(count))
    return ["/bin/sh", "-c", f"{loops} sleep {seconds}; kill 0"]


def test_a_run_keeps_its_share_of_the_cpus_next_to_a_run_spinning_many_processes(
    shared_dir: Path,
) -> None:
    sandbox = BwrapSandbox(Settings(work_root=shared_dir / "work", slot_uid_base=SLOT_BASE))
    autogroup = Path("/proc/sys/kernel/sched_autogroup_enabled")
    if not autogroup.exists() or autogroup.read_text().strip() != "1":
        pytest.skip("autogroup scheduling is off here: use limits.cpus_per_case")
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: nothing to share")
    result: dict[str, Outcome] = {}

    def job(name: str, count: int) -> None:
        with sandbox.session() as session:
            result[name] = session.run(spin(count, 3), mounts=[], limits=LIMITS)

    threads = [threading.Thread(target=job, args=("greedy", 12)),
               threading.Thread(target=job, args=("modest", 1))]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    # with one weight per process the modest run would get 1/13 of the machine (~0.5 s of CPU
    # in 3 s on 2 cores); with one weight per run it keeps close to a whole core
    assert result["modest"].cpu_s > 2.0, result["modest"]
