"""The service's open resources (database, artifact store, settings), built once per process."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from proctor.services.platform.throttle import Throttle
from proctor.settings import ServiceSettings, Settings
from proctor.store.artifacts import ArtifactStore
from proctor.store.db import dispose, open_database
from proctor.store.jobs import Database
from proctor.store.models import AuditEvent


def _nothing() -> None:
    """No executor to wake (``user add``, a client-less use)."""


@dataclass
class Platform:
    """What every service use case works on; ``notify`` wakes the executor on new jobs.

    ``unpacking``: the slots of uploads being unpacked and checked at once
    (``upload_unpacks``), shared by every request of the process. ``throttle``: the rate
    limits of signing in, signing up and password resets (this process's counters).
    """

    settings: ServiceSettings
    host: Settings
    db: Database
    artifacts: ArtifactStore
    notify: Callable[[], None] = field(default=_nothing)
    unpacking: threading.BoundedSemaphore = field(init=False)
    throttle: Throttle = field(default_factory=Throttle)

    def __post_init__(self) -> None:
        self.unpacking = threading.BoundedSemaphore(self.settings.upload_unpacks)

    def close(self) -> None:
        """Close the database connections."""
        dispose(self.db)

    def audit(self, actor: str, action: str, subject: str, detail: str = "") -> None:
        """Record who did what to which object (organizers read the audit trail)."""
        with self.db.begin() as session:
            session.add(
                AuditEvent(
                    at=time.time(), actor=actor, action=action, subject=subject, detail=detail
                )
            )


def open_platform(settings: ServiceSettings, host: Settings | None = None) -> Platform:
    """Open the database (migrated) and artifact store ``settings`` name."""
    if settings.database_url is None:
        settings.data.mkdir(parents=True, exist_ok=True)
    return Platform(
        settings=settings,
        host=host or Settings.from_env(),
        db=open_database(settings.url),
        artifacts=ArtifactStore(settings.artifacts),
    )
