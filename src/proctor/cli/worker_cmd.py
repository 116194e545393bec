"""``proctor worker``: a Celery worker of the service (the ``celery`` executor)."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from proctor.services.platform.celery_worker import WorkerOptions, start_worker
from proctor.settings import ServiceSettings
from proctor.wording import noun, plural

ConcurrencyOption = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        "-c",
        min=1,
        help="Jobs at once (default: min(cores, memory ÷ the largest challenge memory limit)).",
        show_default=False,
    ),
]
QueuesOption = Annotated[
    str | None,
    typer.Option(
        "--queues",
        "-Q",
        help="Comma-separated broker queues to take jobs from (default: PROCTOR_QUEUE; "
        "a challenge's own queue comes from PROCTOR_QUEUE_ROUTES).",
        show_default=False,
    ),
]
HostEnvironmentOption = Annotated[
    bool,
    typer.Option(
        "--allow-host-environment",
        help="Run challenges with 'environment: host' (trusted participants only).",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Announce the start as JSON.")]


def worker_cmd(
    concurrency: ConcurrencyOption = None,
    queues: QueuesOption = None,
    allow_host_environment: HostEnvironmentOption = False,
    as_json: JsonOption = False,
) -> None:
    """Run jobs of the Proctor service taken from the broker, until stopped (SIGTERM).

    Reads PROCTOR_BROKER_URL (default redis://127.0.0.1:6379/0), PROCTOR_DATABASE_URL (else the
    SQLite database of PROCTOR_DATA) and PROCTOR_ARTIFACTS (the artifact folder every worker
    and the server share). On start it takes back the jobs of dead workers of this host and
    refuses challenges with 'environment: host' unless --allow-host-environment (or
    PROCTOR_ALLOW_HOST_ENVIRONMENT=1) is given.
    """
    settings = ServiceSettings.from_env()
    chosen = tuple(q.strip() for q in (queues or "").split(",") if q.strip())

    def announce(started: dict[str, Any]) -> None:
        typer.echo(
            json.dumps(started)
            if as_json
            else f"proctor worker {started['worker']}: "
            f"{plural(started['concurrency'], 'job')} at once "
            f"from {noun(len(started['queues']), 'queue')} {', '.join(started['queues'])}"
        )
        sys.stdout.flush()

    options = WorkerOptions(concurrency, chosen, allow_host_environment)
    raise typer.Exit(start_worker(settings, options, announce))


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``worker``."""
    del score
    app.command("worker")(worker_cmd)
