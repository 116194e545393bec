"""Workers for the service: the runtime every executor's worker needs, and the local pool."""

from __future__ import annotations

from collections.abc import Mapping

from proctor.executor.housekeeping import reconcile_host
from proctor.executor.local import LocalPool
from proctor.executor.runtime import WorkerRuntime
from proctor.pipeline.task import JobEnvironment
from proctor.sandbox import create_sandbox
from proctor.services.environments import job_environments
from proctor.services.platform import Platform
from proctor.spec import Challenge, Phase


def worker_runtime(platform: Platform) -> WorkerRuntime:
    """The runtime of a worker process on ``platform`` (sandbox and environments of its host)."""

    def environments(challenge: Challenge, phase: Phase) -> Mapping[str, JobEnvironment]:
        return job_environments(challenge, phase, platform.host)

    return WorkerRuntime(
        db=platform.db,
        artifacts=platform.artifacts,
        settings=platform.host,
        service=platform.settings,
        sandbox=create_sandbox(platform.host),
        environments=environments,
    )


def start_local_pool(platform: Platform, workers: int) -> LocalPool:
    """Reconcile this host's leftovers, start ``workers`` local workers, wire ``notify``."""
    reconcile_host(platform.db, platform.host.work_root)
    pool = LocalPool(worker_runtime(platform), workers)
    pool.start()
    platform.notify = pool.nudge
    return pool
