"""The ``celery`` executor: a Celery message per job, only to wake a worker.

The job row stays the source of truth. The one task, ``proctor.run_job(job_id)``, calls the
same job function the local pool calls (:func:`proctor.executor.run.run_job`: claim the lease,
heartbeat, pipeline, commit with the lease's token). A message only wakes a worker: the job it
runs is the fair order's next one among the challenges of its queue (``store.fair_queue``:
teams take turns, a per-team cap), not necessarily job ``job_id``; a message that finds nothing
to run does nothing, and a worker that ran a job sends one more wake-up while jobs wait. A
message lost with its worker is replaced when the reaper re-queues the job and an
:class:`~proctor.executor.upkeep.Upkeep` sends it again.

Messages are acknowledged after the job (``task_acks_late``), given back when the pool process
running them dies (``task_reject_on_worker_lost``), and a pool process reserves one message at a
time (``worker_prefetch_multiplier=1``), so a waiting job is never stuck behind a busy worker.
Jobs run in prefork pool processes: one job per process, so an entry that brings down its
process loses that job alone.
"""

from __future__ import annotations

import logging
import os
import socket
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from celery import Celery
from celery.exceptions import SecurityWarning
from celery.signals import worker_process_init, worker_ready
from sqlalchemy import Engine, select
from sqlalchemy.exc import InterfaceError, OperationalError

from proctor.executor.run import has_queued, queue_of_job, queue_scope, run_job
from proctor.executor.runtime import WorkerRuntime
from proctor.settings import ServiceSettings
from proctor.store.jobs import Database
from proctor.store.models import Job, SubmissionRow

log = logging.getLogger(__name__)
TASK = "proctor.run_job"
RETRY_S = 5.0

RuntimeFactory = Callable[[], WorkerRuntime]


@dataclass
class _ProcessState:
    """The runtime of the current process, rebuilt in each pool process after the fork."""

    factory: RuntimeFactory | None = None
    runtime: WorkerRuntime | None = None
    pid: int = 0


_state = _ProcessState()


def worker_id() -> str:
    """The lease owner of this pool process: ``HOST:PID:celery`` (dead pids are reconciled)."""
    return f"{socket.gethostname()}:{os.getpid()}:celery"


def make_app(broker_url: str, queue: str) -> Celery:
    """A Celery app on ``broker_url`` whose task sends and takes jobs on ``queue``."""
    app = Celery("proctor", broker=broker_url, set_as_current=False)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=queue,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        broker_connection_retry_on_startup=True,
        worker_send_task_events=False,
        worker_redirect_stdouts=False,
        # A lost broker connection redelivers the running jobs' messages; the job rows refuse
        # the duplicates, so running jobs go on rather than being cancelled.
        worker_cancel_long_running_tasks_on_connection_loss=False,
    )
    app.task(name=TASK, bind=True, max_retries=None)(_run_task)
    return app


def sender(app: Celery, queue_of: Callable[[int], str]) -> Callable[[int], None]:
    """A function sending job ``job_id``'s wake-up message on its queue (for ``jobs.sweep``)."""

    def send(job_id: int) -> None:
        app.send_task(TASK, args=[job_id], queue=queue_of(job_id))

    return send


def queues_by_challenge(db: Database, service: ServiceSettings) -> Callable[[int], str]:
    """The queue of a job: its challenge's route (``PROCTOR_QUEUE_ROUTES``), else the default."""
    if not service.queue_routes:
        return lambda _: service.queue

    def queue_of(job_id: int) -> str:
        with db() as session:
            challenge = session.scalar(
                select(SubmissionRow.challenge)
                .join(Job, Job.submission_id == SubmissionRow.id)
                .where(Job.id == job_id)
            )
        return service.queue_of(challenge or "")

    return queue_of


def _run_task(task: Any, job_id: int) -> bool:
    """The task body: run the next fair job of job ``job_id``'s queue; retry while the DB is down.

    After a job, one more wake-up goes to the queue when jobs still wait there: a message
    taken while every waiting team ran its cap ran nothing, and this replaces it.
    """
    try:
        runtime = _runtime()
        ran = run_job(int(job_id), worker_id(), runtime)
        if ran and has_queued(runtime, queue_scope(runtime, int(job_id))):
            task.app.send_task(TASK, args=[int(job_id)], queue=queue_of_job(runtime, int(job_id)))
        return ran
    except (OperationalError, InterfaceError) as err:
        log.warning("job %s: the database is unreachable (%s); retrying", job_id, err)
        raise task.retry(countdown=RETRY_S, exc=err) from err


def _runtime() -> WorkerRuntime:
    """The current process's runtime, built on first use (after the pool's fork)."""
    if _state.runtime is None or _state.pid != os.getpid():
        if _state.factory is None:
            raise RuntimeError("the worker's runtime factory was not installed")
        _state.runtime, _state.pid = _state.factory(), os.getpid()
    return _state.runtime


def forget_inherited_connections(db: Database) -> None:
    """Drop the pooled connections a forked process inherited, without closing the parent's."""
    bind = db.kw.get("bind")
    if isinstance(bind, Engine):
        bind.dispose(close=False)


@dataclass(frozen=True, slots=True)
class WorkerRequest:
    """How a worker process runs: pool size, queues, and what runs once it is ready."""

    concurrency: int
    queues: Sequence[str]
    hostname: str
    on_ready: Callable[[], None]
    loglevel: str = "INFO"


def run_worker(app: Celery, factory: RuntimeFactory, request: WorkerRequest) -> int:
    """Run a Celery worker until it is stopped (SIGTERM: warm, SIGQUIT: cold); its exit code.

    ``factory`` builds the runtime inside each pool process; ``request.on_ready`` runs in the
    main process once the pool is up (the upkeep thread starts there, after the forks).
    """
    _state.factory = factory

    def ready(**_: object) -> None:
        request.on_ready()

    def forked(**_: object) -> None:
        _state.runtime, _state.pid = None, 0

    # Proctor's workers run as root on purpose: sandbox slots get their own uids and cgroups.
    warnings.filterwarnings("ignore", category=SecurityWarning)
    worker_ready.connect(ready, weak=False)
    worker_process_init.connect(forked, weak=False)
    worker = app.Worker(
        hostname=request.hostname,
        concurrency=request.concurrency,
        queues=list(request.queues),
        pool="prefork",
        loglevel=request.loglevel,
        without_mingle=True,
        without_gossip=True,
        without_heartbeat=True,
        quiet=True,
    )
    worker.start()
    return int(worker.exitcode or 0)
