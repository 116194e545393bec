"""Nothing is stored without a row that refers to it; the sweeper removes what a crash left.

- a job cancelled while it runs stores no run log (its commit is refused, and the log was to
  be kept inside that commit);
- the sweeper removes artifacts no row refers to and staging files once older than the grace
  period, and keeps what a submission or a result refers to, and what is younger;
- a starting worker's housekeeping runs it.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Mapping
from pathlib import Path

import pytest
from service_seed import Seeded, seed, submit
from toy_challenge import make_entry

from proctor.executor.housekeeping import reconcile_host
from proctor.executor.run import execute
from proctor.executor.runtime import WorkerRuntime
from proctor.pipeline.task import JobEnvironment
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings
from proctor.spec import Challenge, Phase
from proctor.store import jobs
from proctor.store.orphans import sweep_orphans

DAY = 86_400.0


def _files(seeded: Seeded) -> set[Path]:
    root = seeded.platform.artifacts.root
    return {p for p in root.rglob("*") if p.is_file()} if root.exists() else set()


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


@pytest.mark.sandbox
def test_a_job_cancelled_while_running_stores_no_run_log(
    shared_dir: Path, sandbox: BwrapSandbox, sandbox_settings: Settings
) -> None:
    seeded = seed(shared_dir / "service")
    try:
        sid = submit(seeded, "alice", make_entry(shared_dir / "entry"))
        uploads = _files(seeded)

        def host_root(challenge: Challenge, phase: Phase) -> Mapping[str, JobEnvironment]:
            return {}

        platform = seeded.platform
        runtime = WorkerRuntime(platform.db, platform.artifacts, sandbox_settings,
                                platform.settings, sandbox, host_root)  # fmt: skip
        lease = jobs.claim(platform.db, "w", 300.0)
        assert lease is not None
        assert jobs.cancel_jobs(platform.db, sid) == 1  # cancelled while it runs
        execute(lease, runtime)
        assert _files(seeded) == uploads
    finally:
        seeded.platform.close()


def test_the_sweeper_removes_old_orphans_and_keeps_referenced_and_young_files(
    tmp_path: Path,
) -> None:
    seeded = seed(tmp_path / "service")
    try:
        submit(seeded, "alice", make_entry(tmp_path / "entry"))
        store = seeded.platform.artifacts
        (referenced,) = _files(seeded)
        old_orphan = store.path(store.put_stream(io.BytesIO(b"a crash left me")))
        young_orphan = store.path(store.put_stream(io.BytesIO(b"my commit is on its way")))
        staging = store.root / ".upload-killed"
        staging.write_bytes(b"half an upload")
        for path in (referenced, old_orphan, staging):
            _age(path, 2 * DAY)
        removed = sweep_orphans(seeded.platform.db, store, grace_s=DAY)
        assert sorted(removed) == sorted([old_orphan, staging])
        assert _files(seeded) == {referenced, young_orphan}
    finally:
        seeded.platform.close()


def test_a_starting_workers_housekeeping_sweeps_orphans(tmp_path: Path) -> None:
    seeded = seed(tmp_path / "service", orphan_grace_s=60.0)
    try:
        store = seeded.platform.artifacts
        orphan = store.path(store.put_stream(io.BytesIO(b"left by a crash")))
        _age(orphan, 120)
        reconcile_host(seeded.platform.db, tmp_path / "work", store, grace_s=60.0)
        assert not orphan.exists()
    finally:
        seeded.platform.close()
