"""The case servers of one session: one idle server per worker thread, per configuration.

``GroupSession.run_case`` hands a case here when the backend offers servers (``bwrap`` as
root with cgroups). Cases with the same mounts, environment, working folder and limits (their
wall clock, CPU budget and clock pipe aside: those are each case's own) are one
*configuration*: a thread takes an idle server of it and gives it back after the case, so
``jobs`` parallel cases keep ``jobs`` servers busy. When none is idle, the thread has one
started for the cases to come and runs its own case in a sandbox of its own meanwhile: a
server takes longer to boot (a sandbox, then its Python) than one sandbox launch, so a
configuration used once (a python_model job's single dataset) pays no more than before, and
from its second case on every case is a fork. The start runs on the pool's starter thread,
off the case's path, once the case's own launch is done (``START_DELAY_S``); a later case
that finds the host's side of a start under way (cgroups, the launch: milliseconds) waits
for that part only. Idle servers are kept for the ``MAX_CONFIGURATIONS`` configurations
used last (python_model runs datasets in parallel, each its own configuration, and a
dataset's second run must find the server its first one started); older ones are ended off
the case's path. A server that breaks is dropped and its
case is run again the ordinary way; when a server breaks on its very first case, the session
stops using servers.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent import futures
from pathlib import Path

from proctor.sandbox.base import Limits, Mount, Outcome, RunSpec
from proctor.sandbox.case_server import CaseServer, Launching
from proctor.sandbox.case_watch import ServerBrokenError
from proctor.sandbox.runs import RunGroup

Key = tuple[tuple[Mount, ...], tuple[tuple[str, str], ...], str, Limits]
Fallback = Callable[[], Outcome]
MAX_CONFIGURATIONS = 8
"""Configurations whose idle servers a session keeps (the ones used last)."""
START_DELAY_S = 0.03
"""Seconds a server's start waits for the launch of the case that asked for it (unless that
case ends sooner): started at once, it competes with that launch for the kernel's mount
locks and the host's GIL, and the case pays (measured: 16 ms more on a 20 ms launch)."""


@dataclasses.dataclass(eq=False)
class _Start:
    """A server's start: held back until ``go`` (its case ended, or ``not_before`` passed)."""

    not_before: float
    go: threading.Event = dataclasses.field(default_factory=threading.Event)
    future: futures.Future[None] = dataclasses.field(default_factory=futures.Future)


class CasePool:
    """Case servers of one session (its slot, run group and root); thread-safe."""

    def __init__(
        self, backend: Launching, slot: int, runs: RunGroup, root_dir: Path | None
    ) -> None:
        self._backend = backend
        self._slot = slot
        self._runs = runs
        self._root_dir = root_dir
        self._lock = threading.Lock()
        self._idle: OrderedDict[Key, list[CaseServer]] = OrderedDict()  # oldest use first
        self._closed = False
        self._unusable = False
        # the one thread servers are launched from: it lives as long as the pool, because a
        # launcher dies with the thread that started it (setpriv --pdeathsig)
        self._starter = futures.ThreadPoolExecutor(1, thread_name_prefix="case-server-start")
        self._starting: dict[Key, _Start] = {}
        self._closing: list[threading.Thread] = []

    def run(self, spec: RunSpec, *, fallback: Fallback) -> Outcome:
        """Run one case on a server of its configuration (``fallback`` if a server breaks)."""
        key: Key = (
            tuple(spec.mounts),
            tuple(sorted(spec.env.items())),
            spec.cwd,
            dataclasses.replace(spec.limits, wall_s=0.0, cpu_s=None, start_s=None),
        )
        if self._unusable:
            return fallback()
        server, start = self._take(key, spec)
        if server is None:
            try:
                return fallback()  # while the configuration's server boots
            finally:
                if start is not None:
                    start.go.set()
        try:
            outcome = server.run(spec, runs=self._runs)
        except (ServerBrokenError, OSError) as error:
            if not server.served:
                # a server that breaks on its first case (a root without python3, say) would
                # break again: the session's later cases go straight to sandboxes of their own
                self._unusable = True
            outcome = fallback()
            why = f"case server failed ({error}); the case ran in a sandbox of its own"
            return dataclasses.replace(outcome, notes=(*outcome.notes, why))
        self._give_back(key, server)
        return outcome

    def _take(self, key: Key, spec: RunSpec) -> tuple[CaseServer | None, _Start | None]:
        """An idle server of ``key``; else None, and a start of one (unless one is under way).

        A start that is under way (the host's side of it: cgroups, the launch, a few
        milliseconds) is waited for; one still held back (``_Start``) is not.
        """
        with self._lock:
            starting = self._starting.get(key)
        if starting is not None and starting.go.is_set():
            futures.wait([starting.future])
        with self._lock:
            idle = self._idle.get(key, [])
            if idle:
                self._idle.move_to_end(key)
                return idle.pop(), None
            if self._closed or self._unusable or key in self._starting:
                return None, None
            start = _Start(time.monotonic() + START_DELAY_S)
            start.future = self._starter.submit(self._start, key, start, spec)
            self._starting[key] = start
        return None, start

    def _start(self, key: Key, start: _Start, spec: RunSpec) -> None:
        """Start a server of ``key`` (``spec``'s configuration), idle, on the starter thread."""
        start.go.wait(max(0.0, start.not_before - time.monotonic()))
        start.go.set()
        server = None
        try:
            server = CaseServer(self._backend, spec, slot=self._slot, root_dir=self._root_dir)
            self._give_back(key, server)
        except Exception:
            # on this thread nobody would see it, and whatever stops one server (no cgroup, no
            # launcher) stops the next: cases run in sandboxes of their own from now on, where
            # a sandbox that cannot start at all shows
            self._unusable = True
        finally:
            with self._lock:
                self._starting.pop(key, None)

    def _give_back(self, key: Key, server: CaseServer) -> None:
        """Keep ``server`` idle for ``key``; end the configurations used longest ago."""
        with self._lock:
            if self._closed or server.broken:
                server.close()
                return
            self._idle.setdefault(key, []).append(server)
            self._idle.move_to_end(key)
            ended: list[CaseServer] = []
            while len(self._idle) > MAX_CONFIGURATIONS:
                ended += self._idle.popitem(last=False)[1]
            if ended:  # off the case's path: ending a sandbox takes milliseconds
                closing = threading.Thread(target=_close_all, args=(ended,), daemon=True)
                closing.start()
                self._closing = [*(t for t in self._closing if t.is_alive()), closing]

    def close(self) -> None:
        """End every idle server, wait for those being started or ended; busy ones end later."""
        with self._lock:
            self._closed = True
            for start in self._starting.values():
                start.go.set()
        self._starter.shutdown()  # a server started meanwhile is ended by _give_back
        with self._lock:
            servers = [s for idle in self._idle.values() for s in idle]
            self._idle.clear()
            closing, self._closing = self._closing, []
        _close_all(servers)
        for thread in closing:
            thread.join()


def _close_all(servers: list[CaseServer]) -> None:
    for server in servers:
        server.close()
