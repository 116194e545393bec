"""What a worker needs to run jobs, built once per process by the service (``services.worker``).

The executor layer sits below the services, so what only the services know (building a
challenge's environments) comes in as a function.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.task import JobEnvironment
from proctor.resolve import load_challenge
from proctor.sandbox.base import Sandbox
from proctor.settings import ServiceSettings, Settings
from proctor.spec import Challenge, Phase
from proctor.store.artifacts import ArtifactStore
from proctor.store.jobs import Database

EnvironmentsFor = Callable[[Challenge, Phase], Mapping[str, JobEnvironment]]


@dataclass
class WorkerRuntime:
    """A worker's database, artifact store, sandbox, settings and environment provider."""

    db: Database
    artifacts: ArtifactStore
    settings: Settings
    service: ServiceSettings
    sandbox: Sandbox
    environments: EnvironmentsFor
    _challenges: dict[Path, Challenge] = field(default_factory=dict)
    _running: set[CancelToken] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: bool = False

    @contextlib.contextmanager
    def running(self, cancel: CancelToken) -> Iterator[None]:
        """Count a job as running in this worker while inside the block (``stop`` cancels it).

        A job that starts after ``stop`` is cancelled at once.
        """
        with self._lock:
            self._running.add(cancel)
            stopping = self._stopping
        if stopping:
            cancel.cancel()
        try:
            yield
        finally:
            with self._lock:
                self._running.discard(cancel)

    @property
    def stopping(self) -> bool:
        """True once ``stop`` was called: jobs cancelled now go back to the queue."""
        return self._stopping

    def stop(self) -> None:
        """Cancel every running job: its runs are killed and its session unwinds (unmounts)."""
        with self._lock:
            self._stopping = True
            running = list(self._running)
        for cancel in running:
            cancel.cancel()

    def challenge(self, folder: Path) -> Challenge:
        """The installed challenge copy at ``folder`` (loaded once; copies never change)."""
        if folder not in self._challenges:
            self._challenges[folder] = load_challenge(folder)
        return self._challenges[folder]
