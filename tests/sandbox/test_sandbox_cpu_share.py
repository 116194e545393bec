"""Hardening item 7: a run that spins many processes cannot starve a neighbouring run.

As root with a writable cgroup cpu controller, every evaluation (slot) is one cpu cgroup of
equal weight, whatever it spawns, new sessions included. Elsewhere every run is a session of its
own (bwrap --new-session), and with the kernel's autogroup scheduling each session is one
scheduling entity. ``limits.cpus_per_case`` adds a hard quota where organizers want one.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from sandbox_helpers import SLOT_BASE

from proctor.sandbox.base import Limits, MiB, Outcome, RunSpec
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings

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
    weights = os.geteuid() == 0 and sandbox.cgroups.cpu_weights
    if not weights and (not autogroup.exists() or autogroup.read_text().strip() != "1"):
        pytest.skip("no cpu cgroup weights and no autogroup here: use limits.cpus_per_case")
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: nothing to share")
    result = greedy_beside_modest(sandbox, spin)
    # with one weight per process the modest run would get 1/13 of what both got; with one
    # weight per run it keeps about half (the machine is shared: compare, never time)
    assert_near_fair(result)


def greedy_beside_modest(
    sandbox: BwrapSandbox, spinners: Callable[[int, float], list[str]]
) -> dict[str, Outcome]:
    """Two evaluations at once for 3 s: "greedy" runs 12 spinners, "modest" one."""
    result: dict[str, Outcome] = {}

    def job(name: str, count: int) -> None:
        with sandbox.session() as session:
            result[name] = session.run(RunSpec(spinners(count, 3), mounts=[], limits=LIMITS))

    threads = [threading.Thread(target=job, args=("greedy", 12)),
               threading.Thread(target=job, args=("modest", 1))]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return result


def assert_near_fair(result: dict[str, Outcome]) -> None:
    """The modest run got at least 35% of its fair share of the CPU time both runs got."""
    greedy, modest = result["greedy"].cpu_s, result["modest"].cpu_s
    assert greedy is not None and modest is not None, result
    # its fair share: half of what both got, and no more than its one spinner could use
    cores = min(os.cpu_count() or 1, 2)
    fair = (greedy + modest) / cores
    assert modest >= 0.35 * fair, (modest, greedy)


def spin_in_new_sessions(count: int, seconds: float) -> list[str]:
    """Spinners each in a session of its own: one autogroup apiece, were autogroup in charge."""
    loops = " ".join("setsid sh -c 'while :; do :; done' &" for _ in range(count))
    return ["/bin/sh", "-c", f"{loops} sleep {seconds}; kill -9 -1"]


def test_each_evaluation_gets_one_cpu_weight_even_against_many_new_sessions(
    shared_dir: Path,
) -> None:
    """A run that escapes autogroup (a new session per spinner) still gets one run's share.

    With a weight per slot cgroup, two evaluations split the CPU time about evenly; with
    autogroup alone the greedy one would get 12 shares to the modest one's 1 (~1/12).
    """
    settings = Settings(work_root=shared_dir / "work", slot_uid_base=SLOT_BASE)
    sandbox = BwrapSandbox(settings)
    if os.geteuid() != 0 or not sandbox.cgroups.cpu_weights:
        pytest.skip("no writable cgroup cpu controller here: autogroup alone shares the CPU")
    assert_near_fair(greedy_beside_modest(sandbox, spin_in_new_sessions))
