"""A case server's case cgroup is reused: each case's accounting must still be its own.

The host reads the case cgroup's CPU seconds and OOM kills when a case ends and starts the
next case of the same cgroup from those figures; its peak memory is reset before each case.
A case that spun, ran out of memory or grew large leaves nothing in the next one's outcome.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import FAST, SLOT_BASE, is_root

from proctor.sandbox.base import MiB, Outcome, RunSpec, SandboxSession
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not is_root(), reason="case servers need root (slot uids, cgroups)"),
]

ACCOUNTING_UID_BASE = SLOT_BASE + 90
LIMITS = dataclasses.replace(FAST, wall_s=10.0, cpu_s=0.5, memory_bytes=128 * MiB)
GROW = "python3 -c 'b = bytearray({size} * 1024 * 1024); print(len(b))'"


@pytest.fixture
def session(shared_dir: Path) -> Iterator[SandboxSession]:
    settings = Settings(work_root=shared_dir / "work", slot_uid_base=ACCOUNTING_UID_BASE)
    with BwrapSandbox(settings).session() as opened:
        opened.run_case(
            RunSpec(["/bin/true"], mounts=[], limits=LIMITS)
        )  # the server boots meanwhile
        yield opened


def served(session: SandboxSession, script: str) -> Outcome:
    """``script`` as a case of the one configuration (on its server, from the second case)."""
    return session.run_case(RunSpec(["/bin/sh", "-c", script], mounts=[], limits=LIMITS))


def test_a_case_after_one_over_its_cpu_budget_is_charged_only_its_own(
    session: SandboxSession,
) -> None:
    served(session, "true")
    spun = served(session, "while :; do :; done")
    assert spun.timed_out and "cpu time limit reached" in spun.notes, spun
    assert spun.cpu_s >= LIMITS.cpu_s, spun
    following = served(session, "echo fine")
    assert following.succeeded and not following.timed_out, following
    assert following.cpu_s < LIMITS.cpu_s / 2, following


def test_a_case_after_one_killed_for_memory_is_not_reported_over_its_memory(
    session: SandboxSession,
) -> None:
    over = served(session, GROW.format(size=200))
    assert over.memory_exceeded and not over.succeeded, over
    following = served(session, GROW.format(size=8))
    assert following.succeeded and not following.memory_exceeded, following
    again = served(session, GROW.format(size=200))
    assert again.memory_exceeded, again  # the second OOM kill of the cgroup is seen too


def test_each_case_reports_its_own_peak_memory(session: SandboxSession) -> None:
    large = served(session, GROW.format(size=64))
    assert large.succeeded and large.peak_memory_bytes >= 64 * MiB, large
    small = served(session, "true")
    assert small.succeeded and small.peak_memory_bytes < 32 * MiB, small
