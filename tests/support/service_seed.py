"""A service platform in a temporary folder, seeded for API tests (no server process).

The toy records challenge (``tests/support/toy_challenge.py``) is installed; an organizer ``olga``,
``alice`` of team ``amber`` and ``bob`` of team ``blue`` hold API tokens. ``submit`` stores an
entry of a team through the real service; ``run_queued`` runs the queued jobs with the real
executor function (``executor.run.run_next``) on the sandbox given, so the stored result is
exactly what a worker stores: the disclosed report, per-case values, the organizer's logs.
"""

from __future__ import annotations

import io
import tarfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI
from toy_challenge import make_challenge

from proctor.executor.run import run_next
from proctor.executor.runtime import WorkerRuntime
from proctor.pipeline.task import JobEnvironment
from proctor.sandbox.base import Sandbox
from proctor.services.local.environments import job_environments
from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import add_user, authenticate
from proctor.services.platform.resources import Platform, open_platform
from proctor.settings import ServiceSettings, Settings
from proctor.spec import Challenge, Phase
from proctor.web.app import create_app

USERS = (("olga", True, None), ("alice", False, "amber"), ("bob", False, "blue"))


@dataclass
class Seeded:
    """The platform, its app, every user's token, the installed challenge's folder."""

    platform: Platform
    app: FastAPI
    tokens: dict[str, str]
    challenge_root: Path
    submissions: list[str] = field(default_factory=list)

    def headers(self, user: str) -> dict[str, str]:
        """The Bearer header of ``user``."""
        return {"Authorization": f"Bearer {self.tokens[user]}"}


def seed(
    root: Path, *, upload_bytes: int = 1_000_000, determinism_cases: int = 0, **service: Any
) -> Seeded:
    """Open a platform under ``root`` (SQLite), install the toy challenge, add the users.

    ``service``: other ``ServiceSettings`` fields (upload limits, the team cap...).
    """
    settings = ServiceSettings(
        data=root / "data", allow_host_environment=True, upload_bytes=upload_bytes, **service
    )
    platform = open_platform(settings, Settings(work_root=root / "work"))
    tokens = {
        name: add_user(platform, name, organizer=organizer, team=team).token
        for name, organizer, team in USERS
    }
    bundle = make_challenge(root / "bundle" / "toy", determinism_cases=determinism_cases)
    olga = authenticate(platform, tokens["olga"])
    installs.install(platform, olga, str(bundle))
    _, challenge = installs.current(platform, "toy")
    return Seeded(platform, create_app(platform), tokens, challenge.root)


def archive(folder: Path) -> bytes:
    """``folder`` as a .tar.gz archive in memory (its files at the archive's top)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(folder.iterdir()):
            tar.add(path, arcname=path.name)
    return buffer.getvalue()


def submit(seeded: Seeded, user: str, entry: Path) -> str:
    """Submit the entry folder as ``user``'s team through the service; the submission id."""
    principal = authenticate(seeded.platform, seeded.tokens[user])
    receipt = submissions.submit(
        seeded.platform, principal, "toy", None, io.BytesIO(archive(entry))
    )
    seeded.submissions.append(receipt.submission)
    return receipt.submission


def run_queued(
    seeded: Seeded, sandbox: Sandbox, settings: Settings, *, declared: bool = False
) -> None:
    """Run every queued job to its committed result with the real job function.

    ``declared``: tasks run in the environments their challenge declares (built in the
    store on first use), as a worker's do; else every task runs on the host's root.
    """

    def host_root(challenge: Challenge, phase: Phase) -> Mapping[str, JobEnvironment]:
        return job_environments(challenge, phase, settings) if declared else {}

    platform = seeded.platform
    runtime = WorkerRuntime(
        db=platform.db,
        artifacts=platform.artifacts,
        settings=settings,
        service=platform.settings,
        sandbox=sandbox,
        environments=host_root,
    )
    while run_next("test-worker", runtime):
        pass


@contextmanager
def served(app: FastAPI) -> Iterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 (a free port) in a thread; its base URL."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the test server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def clients(seeded: Seeded, url: str) -> dict[str, httpx.Client]:
    """An HTTP client per walk role (``route_walk.ROLES``) on the served app."""
    users = {"anonymous": None, "other": "bob", "member": "alice", "organizer": "olga"}
    return {
        role: httpx.Client(base_url=url, headers=seeded.headers(user) if user else {}, timeout=60)
        for role, user in users.items()
    }
