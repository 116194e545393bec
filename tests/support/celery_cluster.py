"""A real Celery deployment on this machine for tests and benches: Redis, `proctor worker`s.

Every cluster has its own broker queue (several engineers' tests share the Redis server), its
own database (a SQLite file or a PostgreSQL schema), artifact folder and work root. Worker and
server processes start in their own process groups and are killed, group and all, by
:meth:`Cluster.close`. Submissions are made in-process through the services (the same code the
REST API calls); a submission's jobs are sent to the broker by the dispatch ``serve --executor
celery`` uses.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
from kombu import Connection
from sqlalchemy import func, text
from sqlalchemy import select as sql_select

from proctor.executor.celery_app import make_app, queues_by_challenge, sender
from proctor.services.platform.accounts import Principal, add_user, authenticate
from proctor.services.platform.answers import Receipt
from proctor.services.platform.installs import install
from proctor.services.platform.resources import Platform, open_platform
from proctor.services.platform.submissions import submit
from proctor.settings import ServiceSettings
from proctor.store import jobs
from proctor.store.models import Attempt, Job, Result

PROCTOR = str(Path(sys.executable).with_name("proctor"))
BROKER = "redis://127.0.0.1:6379/0"
RABBITMQ = "amqp://guest:guest@127.0.0.1:5672//"
SLOT_BASE = "63000"


def redis_unreachable() -> str | None:
    """Why the test broker cannot be used, or None."""
    try:
        redis.Redis.from_url(BROKER, socket_connect_timeout=2).ping()
    except Exception as err:
        return f"Redis at 127.0.0.1:6379 unreachable: {err}"
    return None


def rabbitmq_unreachable() -> str | None:
    """Why RabbitMQ (guest on 127.0.0.1:5672) cannot be used, or None."""
    try:
        with Connection(RABBITMQ, connect_timeout=3) as connection:
            connection.ensure_connection(max_retries=1)
    except Exception as err:
        return f"RabbitMQ at 127.0.0.1:5672 unreachable: {err}"
    return None


@dataclass
class Proc:
    """A `proctor worker` or `proctor serve` in its own process group; stderr kept in memory."""

    process: subprocess.Popen[str]
    announced: dict[str, Any]
    _lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._lines.append(line)

    @property
    def pid(self) -> int:
        return self.process.pid

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the whole process group (main process, pool processes)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)

    def kill(self) -> None:
        """SIGKILL the group and reap the main process."""
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def log(self) -> str:
        """What the process wrote on stderr so far."""
        return "".join(self._lines)

    def wait_log(self, text: str, timeout: float) -> None:
        """Wait until ``text`` appears on the process's stderr."""
        wait_for(lambda: text in self.log(), timeout, f"{text!r} in the log of {self.pid}")


def _announced(process: subprocess.Popen[str], timeout: float) -> dict[str, Any]:
    """The first JSON line on ``process``'s stdout, within ``timeout`` seconds."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    line = process.stdout.readline() if ready else ""
    if not line:
        os.killpg(process.pid, signal.SIGKILL)
        _, err = process.communicate(timeout=30)
        raise AssertionError(f"{process.args} did not start: {err[-3000:]}")

    return dict(json.loads(line))


@dataclass
class Cluster:
    """One deployment: database URL, shared folders, a queue of its own, its processes."""

    root: Path
    database_url: str
    broker: str = BROKER
    queue: str = field(default_factory=lambda: f"proctor-test-{secrets.token_hex(6)}")
    extra_env: dict[str, str] = field(default_factory=dict)
    procs: list[Proc] = field(default_factory=list)
    _platform: Platform | None = None

    @property
    def env(self) -> dict[str, str]:
        """The environment of every process of the deployment (intervals of seconds)."""
        env = dict(os.environ)
        for name in ("PROCTOR_TOKEN", "PROCTOR_SERVER", "PROCTOR_SANDBOX"):
            env.pop(name, None)
        return (
            env
            | {
                "PROCTOR_DATABASE_URL": self.database_url,
                "PROCTOR_DATA": str(self.root / "data"),
                "PROCTOR_ARTIFACTS": str(self.root / "artifacts"),
                "PROCTOR_WORK_ROOT": str(self.root / "work"),
                "PROCTOR_BROKER_URL": self.broker,
                "PROCTOR_QUEUE": self.queue,
                "PROCTOR_LEASE_S": "2",
                "PROCTOR_HEARTBEAT_S": "0.5",
                "PROCTOR_REAPER_S": "0.5",
                "PROCTOR_ALLOW_HOST_ENVIRONMENT": "1",
                "PROCTOR_SLOT_UID_BASE": SLOT_BASE,
            }
            | self.extra_env
        )

    @property
    def platform(self) -> Platform:
        """The deployment opened in this process; new jobs go to the broker at once."""
        if self._platform is None:
            settings = ServiceSettings.from_env(self.env)
            self._platform = open_platform(settings)
            db = self._platform.db
            send = sender(make_app(self.broker, self.queue), queues_by_challenge(db, settings))
            self._platform.notify = lambda: jobs.sweep(db, send) and None
        return self._platform

    def spawn(self, argv: list[str], extra: dict[str, str] | None = None) -> Proc:
        """Start ``proctor ARGV`` in its own group; wait for its JSON announcement."""
        process = subprocess.Popen(
            [PROCTOR, *argv], env=self.env | (extra or {}), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        proc = Proc(process, _announced(process, 60))
        self.procs.append(proc)
        return proc

    def start_worker(self, extra: dict[str, str] | None = None, concurrency: int = 1) -> Proc:
        """A `proctor worker --concurrency N` of the deployment, once its pool is up."""
        return self.spawn(["worker", "--concurrency", str(concurrency), "--json"], extra)

    def user(self, name: str, *, organizer: bool = False, team: str | None = None) -> Principal:
        """A new user of the deployment."""
        created = add_user(self.platform, name, organizer=organizer, team=team)
        return authenticate(self.platform, created.token)

    def install(self, bundle: Path) -> None:
        """Install the challenge at ``bundle`` as an organizer."""
        install(self.platform, self.user(f"org{secrets.token_hex(3)}", organizer=True), str(bundle))

    def submit(self, who: Principal, entry: Path, challenge: str = "toy") -> Receipt:
        """Submit the entry folder ``entry`` (archived) as ``who``; its jobs are sent at once."""
        archive = entry.with_suffix(".tar.gz")
        if not archive.exists():
            with tarfile.open(archive, "w:gz") as tar:
                tar.add(entry, arcname="entry")
        with archive.open("rb") as upload:
            return submit(self.platform, who, challenge, None, upload)

    def jobs_of(self, sid: str) -> list[Job]:
        """The submission's job rows, fresh from the database."""
        with self.platform.db() as session:
            return list(session.scalars(sql_select(Job).where(Job.submission_id == sid)))

    def diagnosis(self, sid: str) -> str:
        """What a test that timed out should print.

        The jobs, the database's sessions that wait or sit in a transaction (PostgreSQL),
        each process's last lines.
        """
        rows = [
            f"job {j.id}: {j.state} stage={j.stage} attempt={j.attempt} "
            f"owner={j.lease_owner} expires={j.lease_expires}"
            for j in self.jobs_of(sid)
        ]
        if self.database_url.startswith("postgresql"):
            with self.platform.db() as session:
                rows += [str(tuple(row)) for row in session.execute(text(
                    "SELECT pid, state, wait_event_type, wait_event, left(query, 90) "
                    "FROM pg_stat_activity WHERE datname = current_database() "
                    "AND (state LIKE 'idle in transaction%' OR wait_event_type = 'Lock')"
                ))]  # fmt: skip
        for proc in self.procs:
            rows.append(f"--- process {proc.pid} ---\n{proc.log()[-3000:]}")
        return "\n".join(rows)

    def results_of(self, job_id: int) -> list[Result]:
        """Every result row stored for ``job_id``."""
        with self.platform.db() as session:
            return list(session.scalars(sql_select(Result).where(Result.job_id == job_id)))

    def attempts_of(self, job_id: int) -> list[Attempt]:
        """The job's attempt rows, in order."""
        with self.platform.db() as session:
            return list(
                session.scalars(
                    sql_select(Attempt).where(Attempt.job_id == job_id).order_by(Attempt.attempt)
                )
            )

    def result_count(self) -> int:
        """Result rows of the whole deployment."""
        with self.platform.db() as session:
            return int(session.scalar(sql_select(func.count()).select_from(Result)) or 0)

    def close(self) -> None:
        """Kill every process started, drop the queue, close the database."""
        for proc in self.procs:
            if proc.process.poll() is None:
                proc.kill()
        for proc in self.procs:
            for stream in (proc.process.stdout, proc.process.stderr):
                if stream is not None:
                    stream.close()
        if self.broker == BROKER:
            client = redis.Redis.from_url(BROKER)
            for key in list(client.scan_iter(f"*{self.queue}*")):  # its queues and bindings
                client.delete(key)
        else:
            with Connection(self.broker) as connection:
                connection.default_channel.queue_delete(self.queue)
        if self._platform is not None:
            self._platform.close()
        shutil.rmtree(self.root / "work", ignore_errors=True)


def wait_for(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``predicate`` every 0.1 s until it returns a true value; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def lease_pid(job: Job) -> int:
    """The pid of the pool process holding ``job`` (lease owner ``HOST:PID:celery``)."""
    assert job.lease_owner is not None
    return int(job.lease_owner.split(":")[1])
