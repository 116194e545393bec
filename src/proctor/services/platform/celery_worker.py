"""The ``celery`` executor's use cases: ``proctor worker``, and the dispatch ``serve`` runs.

A worker is one machine's share of the queue: it needs the database (``PROCTOR_DATABASE_URL``),
the artifact folder every worker shares (``PROCTOR_ARTIFACTS``) and the broker
(``PROCTOR_BROKER_URL``). On start it refuses challenges that run on the host's ``/usr``
unless allowed, takes back the jobs of dead workers of its host (and removes their run folders,
cgroups and mounts), and runs ``concurrency`` jobs at once, by default as many as the host's
cores and memory hold. Stopped, even cold (SIGQUIT), it exits once its pool processes have
released their jobs' sandboxes (up to ``POOL_UNWIND_S``), then removes what dead ones left.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from proctor.errors import UsageError
from proctor.executor.celery_app import (
    WorkerRequest,
    forget_inherited_connections,
    make_app,
    queues_by_challenge,
    run_worker,
    sender,
)
from proctor.executor.housekeeping import reconcile_host
from proctor.executor.runtime import WorkerRuntime
from proctor.executor.upkeep import Upkeep
from proctor.host import child_pids
from proctor.sandbox import create_sandbox
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.local.environments import tasks_on_host
from proctor.services.platform.installs import current, installed_names
from proctor.services.platform.resources import Platform, open_platform
from proctor.services.platform.worker import worker_runtime
from proctor.settings import ServiceSettings, Settings
from proctor.spec import Challenge

log = logging.getLogger(__name__)
# How long a stopping worker waits for its pool processes to release their jobs' sandboxes.
POOL_UNWIND_S = 60.0


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """``proctor worker``'s options: jobs at once (None: the default), queues, host override."""

    concurrency: int | None = None
    queues: tuple[str, ...] = ()
    allow_host_environment: bool = False


def host_memory_bytes() -> int:
    """The host's physical memory in bytes."""
    return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))


def host_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) or 1


def default_concurrency(memory_bytes: Iterable[int], cores: int, host_memory: int) -> int:
    """min(cores, host memory ÷ the largest ``memory_bytes``), at least 1.

    A job's sandbox may use its challenge's ``limits.memory_bytes``, so a worker runs no more
    jobs at once than the host could hold if every one used its limit.
    """
    largest = max(memory_bytes, default=0)
    fitting = host_memory // largest if largest > 0 else cores
    return max(1, min(cores, fitting))


def installed_challenges(platform: Platform) -> list[Challenge]:
    """The newest version of every installed challenge."""
    return [current(platform, name)[1] for name in installed_names(platform)]


def check_runnable(challenges: Iterable[Challenge], allowed: bool) -> None:
    """Refuse a challenge with ``environment: host`` unless ``allowed``, naming the override."""
    if allowed:
        return
    for challenge in challenges:
        for task in tasks_on_host(challenge, (t.name for t in challenge.tasks))[:1]:
            raise UsageError(
                f"challenge {challenge.name!r} runs task {task!r} on the host "
                "('environment: host'), which shows this machine's /usr to entries: declare "
                "an environment, or start the worker with --allow-host-environment "
                "(PROCTOR_ALLOW_HOST_ENVIRONMENT=1) if every participant is trusted"
            )


def reconcile_sandboxes(host: Settings) -> None:
    """Remove what dead workers of this host left in the sandbox: run cgroups, mounts."""
    sandbox = create_sandbox(host)
    if isinstance(sandbox, BwrapSandbox):
        sandbox.reconcile()


def _await_pool(timeout_s: float) -> None:
    """Wait up to ``timeout_s`` for this worker's child processes (its pool) to end.

    A cold shutdown (SIGQUIT) ends the main process's loop while its pool processes still
    unwind their jobs (killing runs, unmounting roots); the worker exits after them, so that
    whoever stopped it finds the host released once it has exited.
    """
    deadline = time.monotonic() + timeout_s
    while child_pids(os.getpid()) and time.monotonic() < deadline:
        time.sleep(0.1)


def _runtime_factory(platform: Platform) -> Callable[[], WorkerRuntime]:
    """Builds a pool process's runtime on the platform opened before the fork."""

    def build() -> WorkerRuntime:
        forget_inherited_connections(platform.db)
        return worker_runtime(platform)

    return build


def start_worker(
    settings: ServiceSettings, options: WorkerOptions, announce: Callable[[dict[str, Any]], None]
) -> int:
    """Run a ``proctor worker`` until it is stopped; its exit code.

    ``announce`` hears ``{"worker", "concurrency", "queues"}`` once the pool is up.
    Raises ``UsageError`` for a challenge it refuses or a database it cannot open.
    """
    if options.allow_host_environment:
        settings = dataclasses.replace(settings, allow_host_environment=True)
    platform = open_platform(settings)
    try:
        queues = options.queues or (settings.queue,)
        challenges = [
            c for c in installed_challenges(platform) if settings.queue_of(c.name) in queues
        ]
        check_runnable(challenges, settings.allow_host_environment)
        concurrency = options.concurrency or default_concurrency(
            (c.limits.memory_bytes for c in challenges), host_cores(), host_memory_bytes()
        )
        reconcile_host(
            platform.db, platform.host.work_root, platform.artifacts, settings.orphan_grace_s
        )
        reconcile_sandboxes(platform.host)
        app = make_app(settings.broker_url, settings.queue)
        upkeep = Upkeep(
            platform.db, settings, sender(app, queues_by_challenge(platform.db, settings))
        )
        hostname = f"proctor-{os.getpid()}@{socket.gethostname()}"

        def ready() -> None:
            upkeep.start()
            announce({"worker": hostname, "concurrency": concurrency, "queues": list(queues)})

        request = WorkerRequest(concurrency, queues, hostname, ready)
        try:
            return run_worker(app, _runtime_factory(platform), request)
        finally:
            upkeep.stop()
            _await_pool(POOL_UNWIND_S)
            try:
                reconcile_sandboxes(platform.host)
            except OSError as err:  # the next start reconciles again
                log.warning("leftovers of this worker's jobs not released: %s", err)
    finally:
        platform.close()


def start_dispatch(platform: Platform) -> Upkeep:
    """``serve --executor celery``: send new jobs to the broker; reap and sweep in the background.

    ``platform.notify`` (called after each submission) sends at once; the upkeep thread
    re-sends what was reaped or could not be sent.
    """
    settings = platform.settings
    app = make_app(settings.broker_url, settings.queue)
    upkeep = Upkeep(platform.db, settings, sender(app, queues_by_challenge(platform.db, settings)))
    upkeep.start()
    platform.notify = upkeep.sweep_now
    return upkeep
