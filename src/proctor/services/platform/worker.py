"""Workers for the service: the runtime every executor's worker needs, and the local pool."""

from __future__ import annotations

from collections.abc import Mapping

from proctor.errors import PlatformError
from proctor.executor.housekeeping import reconcile_host
from proctor.executor.local import LocalPool
from proctor.executor.runtime import WorkerRuntime
from proctor.pipeline.task import JobEnvironment
from proctor.sandbox import create_sandbox
from proctor.services.local.environments import job_environments, tasks_on_host
from proctor.services.platform.finished import mail_if_finished
from proctor.services.platform.resources import Platform
from proctor.spec import Challenge, Phase


def worker_runtime(platform: Platform) -> WorkerRuntime:
    """The runtime of a worker process on ``platform`` (sandbox and environments of its host)."""

    def environments(challenge: Challenge, phase: Phase) -> Mapping[str, JobEnvironment]:
        check_host_allowed(challenge, phase, allowed=platform.settings.allow_host_environment)
        return job_environments(challenge, phase, platform.host)

    return WorkerRuntime(
        db=platform.db,
        artifacts=platform.artifacts,
        settings=platform.host,
        service=platform.settings,
        sandbox=create_sandbox(platform.host),
        environments=environments,
        job_committed=lambda job_id: _finished(platform, job_id),
    )


def _finished(platform: Platform, job_id: int) -> None:
    """The "finished" mail once the job's submission has ended (``services.platform.finished``)."""
    mail_if_finished(platform, job_id)


def check_host_allowed(challenge: Challenge, phase: Phase, *, allowed: bool) -> None:
    """Refuse, per job, a task on ``environment: host`` when this worker does not allow it.

    Workers check the installed challenges when they start; a challenge installed later by a
    server that allows the host's ``/usr`` is refused here (a platform failure of the job,
    not retried), so one permissive server cannot put the host's tree under other workers'
    entries.
    """
    if allowed:
        return
    for task in tasks_on_host(challenge, phase.tasks)[:1]:
        raise PlatformError(
            f"challenge {challenge.name!r} runs task {task!r} on the host ('environment: "
            "host'), which this worker refuses: declare an environment, or start the "
            "worker with --allow-host-environment (PROCTOR_ALLOW_HOST_ENVIRONMENT=1) if "
            "every participant is trusted"
        )


def start_local_pool(platform: Platform, workers: int) -> LocalPool:
    """Reconcile this host's leftovers, start ``workers`` local workers, wire ``notify``."""
    reconcile_host(
        platform.db, platform.host.work_root, platform.artifacts, platform.settings.orphan_grace_s
    )
    pool = LocalPool(worker_runtime(platform), workers)
    pool.start()
    platform.notify = pool.nudge
    return pool
