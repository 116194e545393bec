"""``proctor serve``: open the platform, start the executor, run the REST API.

The executor is a pool of local workers (``local``) or, for ``celery``, the dispatch that sends
new jobs to the broker for ``proctor worker`` processes.

The web face sits beside the CLI, so neither imports the other: uvicorn loads the app by name
(``proctor.web.server:app``), which asks this module for the platform being served.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType

import uvicorn

from proctor.errors import UsageError
from proctor.executor.local import LocalPool
from proctor.executor.upkeep import Upkeep
from proctor.services.platform.celery_worker import start_dispatch
from proctor.services.platform.installs import check_servable, current, installed_names
from proctor.services.platform.resources import Platform, open_platform
from proctor.services.platform.worker import start_local_pool
from proctor.settings import ServiceSettings

_serving: list[Platform] = []
EXECUTORS = ("local", "celery")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass(frozen=True, slots=True)
class ServeRequest:
    """Where to listen, the executor (``local`` or ``celery``) and how many local workers."""

    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 2
    executor: str = "local"


def served_platform() -> Platform:
    """The platform ``serve`` is serving (for the web app's factory)."""
    if not _serving:
        raise RuntimeError("no platform is being served")
    return _serving[-1]


def check_installed(platform: Platform) -> None:
    """Refuse to serve an installed challenge that runs on the host's /usr, unless allowed."""
    for name in installed_names(platform):
        check_servable(current(platform, name)[1], platform)


def serve(
    settings: ServiceSettings, request: ServeRequest, announce: Callable[[str], None]
) -> None:
    """Serve until interrupted; ``announce`` hears the URL once the socket listens."""
    if request.executor not in EXECUTORS:
        raise UsageError(f"--executor {request.executor}: choose one of {', '.join(EXECUTORS)}")
    platform = open_platform(settings)
    check_installed(platform)
    if request.executor == "celery":
        pool: LocalPool | Upkeep = start_dispatch(platform)
    else:
        pool = start_local_pool(platform, request.workers)
    _serving.append(platform)
    config = uvicorn.Config(
        "proctor.web.server:app",
        factory=True,
        host=request.host,
        port=request.port,
        log_level="warning",
        proxy_headers=settings.trust_proxy,  # X-Forwarded-* believed only when configured
    )
    server = uvicorn.Server(config)
    original = server.startup

    async def startup(sockets: object = None) -> None:
        await original(sockets)  # type: ignore[arg-type]
        for sock in server.servers[0].sockets if server.servers else ():
            host, port = sock.getsockname()[:2]
            announce(f"http://{host}:{port}")

    server.startup = startup  # type: ignore[method-assign]
    with _signals_kept() as stopped_by:
        try:
            server.run()
        finally:
            pool.stop()
            _serving.remove(platform)
            platform.close()
    for sig in stopped_by[:1]:  # stop as the signal asked, now that nothing is left behind
        signal.raise_signal(sig)


@contextlib.contextmanager
def _signals_kept() -> Iterator[list[int]]:
    """Hold SIGINT and SIGTERM for the block; yields the ones received (raise them after).

    uvicorn takes both while it serves and, once it has shut down, raises them again with the
    handlers it found: without these, a SIGTERM would end the process right there, before the
    executor cancels its jobs and releases their mounts, loop devices and cgroups.
    """
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received  # signals reach the main thread only; nothing to hold here
        return

    def keep(sig: int, _: FrameType | None) -> None:
        received.append(sig)

    previous = {sig: signal.signal(sig, keep) for sig in STOP_SIGNALS}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
