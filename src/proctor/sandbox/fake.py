"""A scripted sandbox for unit tests of the layers above it (like httpx's ``MockTransport``).

``FakeSandbox(handler)`` runs nothing and isolates nothing: every run calls
``handler(request)`` in the caller's thread and returns the handler's ``Outcome``. The request
carries what a backend would receive (argv, mounts with their host ``source`` folders, env, cwd,
limits, slot), so a handler can play the entry: read its inputs and write its outputs on the
host. Never use it to run untrusted code, and never to test the sandbox itself; that boundary is
tested with real bubblewrap.

Workspaces are plain folders (removed on leaving), ``give`` does nothing, sessions get distinct
slots from an in-memory pool. Cancelling works as for real backends: later runs return
``CANCELLED`` without calling the handler, and a handler under way sees ``request.cancelled``
set (a handler that plays a long run waits on it); its run then returns ``CANCELLED`` too,
whatever the handler returns.

Example::

    def handler(request: FakeRequest) -> Outcome:
        record = request.argv[-1]
        request.host_path(f"/home/out/{record}.txt").write_text("A")
        return Outcome(exit_status=0, wall_s=0.5)

    sandbox = FakeSandbox(handler)
    with sandbox.session() as session, session.workspace(tmp / "home", size_bytes=MiB) as home:
        (home / "out").mkdir()
        outcome = session.run(["./next.sh", "r01"], mounts=[Mount(home, "/home", writable=True)],
                              limits=Limits())
    assert outcome.succeeded and sandbox.requests[0].slot == 0
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from proctor.errors import PlatformError
from proctor.sandbox.base import CANCELLED, Limits, Mount, Outcome, RunSpec, plain_workspace
from proctor.sandbox.runs import RunGroup
from proctor.sandbox.session import SessionSandbox
from proctor.sandbox.slots import SLOT_COUNT


@dataclass(frozen=True, slots=True)
class FakeRequest:
    """One run asked of a ``FakeSandbox``; ``cancelled`` is set when the run is killed."""

    argv: tuple[str, ...]
    mounts: tuple[Mount, ...]
    limits: Limits
    env: Mapping[str, str]
    cwd: str
    slot: int
    cancelled: threading.Event = field(default_factory=threading.Event, compare=False)

    def host_path(self, target: str) -> Path:
        """The host path that in-sandbox path ``target`` shows (longest mount target wins).

        Raises ``KeyError`` when no mount holds ``target``.
        """
        for mount in sorted(self.mounts, key=lambda m: len(m.target), reverse=True):
            prefix = mount.target.rstrip("/")
            if target == prefix or target.startswith(prefix + "/"):
                return Path(mount.source) / target[len(prefix) :].lstrip("/")
        raise KeyError(f"no mount shows {target!r} (mounts: {[m.target for m in self.mounts]})")


Handler = Callable[[FakeRequest], Outcome]


class FakeSandbox(SessionSandbox):
    """Answers every run with ``handler``; records each request in ``requests``.

    No isolation at all: for unit tests of the layers above the sandbox only.
    """

    name = "fake"

    def __init__(self, handler: Handler, *, slots: int = SLOT_COUNT) -> None:
        super().__init__()
        self.handler = handler
        self.requests: list[FakeRequest] = []
        self._slot_count = slots
        self._lock = threading.Lock()
        self._held: set[int] = set()

    @contextlib.contextmanager
    def hold_slot(self) -> Iterator[int]:
        """The lowest slot no session of this fake holds (``PlatformError`` when all are)."""
        with self._lock:
            free = [slot for slot in range(self._slot_count) if slot not in self._held]
            if not free:
                raise PlatformError(f"all {self._slot_count} fake sandbox slots are busy")
            self._held.add(free[0])
        try:
            yield free[0]
        finally:
            with self._lock:
                self._held.discard(free[0])

    def run_in_group(
        self, runs: RunGroup, spec: RunSpec, *, slot: int, root_dir: Path | None = None
    ) -> Outcome:
        """Call the handler as a member of ``runs``; ``CANCELLED`` if the run was killed."""
        if runs.cancelled:
            return CANCELLED
        request = FakeRequest(
            tuple(spec.argv), tuple(spec.mounts), spec.limits, dict(spec.env), spec.cwd, slot
        )
        with self._lock:
            self.requests.append(request)
        runs.join(request.cancelled.set)
        try:
            outcome = self.handler(request)
        finally:
            runs.leave(request.cancelled.set)
        return CANCELLED if request.cancelled.is_set() else outcome

    def workspace(
        self, path: Path, *, size_bytes: int, slot: int
    ) -> contextlib.AbstractContextManager[Path]:
        """A plain folder (``size_bytes`` is not enforced), removed on leaving."""
        return plain_workspace(path)
