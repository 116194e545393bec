"""The sandbox contract: run one command under isolation and limits, report what happened.

The sandbox knows nothing of challenges, entries or storage: it receives an argv, the folders to
show inside, the limits and the environment, and returns an ``Outcome``.

Work for one job happens in a ``SandboxSession``: entering ``Sandbox.session()`` claims a slot
(an unprivileged identity no other session on the host holds), the session's runs and
workspaces use it, ``cancel()`` kills only that session's runs, and leaving releases the slot::

    with sandbox.session() as session, session.workspace(home, size_bytes=64 * MiB) as path:
        (path / "setup.sh").write_text("...")
        session.give(path)
        setup = RunSpec(["sh", "setup.sh"], mounts=[Mount(path, "/home", writable=True)],
                        limits=Limits(wall_s=60), cwd="/home")
        outcome = session.run(setup)
"""

from __future__ import annotations

import contextlib
import signal
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from proctor.sandbox.rootfs import RootFilesystem
from proctor.trees import remove_tree_quietly

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


@dataclass(frozen=True, slots=True)
class Mount:
    """A host folder or file shown inside the sandbox at ``target`` (absolute).

    Read-only unless ``writable``.
    """

    source: Path
    target: str
    writable: bool = False


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of one run. Seconds, bytes, counts.

    ``cpu_s`` defaults to ``longest_s`` (a run cannot use more CPU than wall time per core without
    being stopped by the wall clock anyway). ``log_bytes`` caps each of stdout and stderr.
    ``tmp_bytes`` caps ``/tmp`` and ``shm_bytes`` caps ``/dev/shm`` (both tmpfs, charged to the
    memory limit as well).

    ``cpus`` caps the cores a run may keep busy (cgroup CPU quota, where the controller
    exists; None: no cap), so a neighbour that spins cannot push other runs into timeouts.

    ``processes`` caps the run's own processes (cgroup ``pids.max``). ``uid_processes`` is the
    ``RLIMIT_NPROC`` of the slot uid, which the kernel counts over every process of that uid:
    runs that share a slot at the same time (parallel cases of one entry) need room for all of
    them. ``None`` means ``processes``. Without a cgroup the rlimit is the only process cap.

    ``start_s`` makes the wall clock start when the run says so: the run gets a pipe whose
    descriptor number is in its environment as ``PROCTOR_CLOCK_FD``; until it writes a byte
    there it may take at most ``start_s`` seconds, and from that byte on ``wall_s`` seconds
    (the supervisor watches the pipe from outside; later bytes change nothing). A harness uses
    it to load data unclocked before any participant code runs. None: ``wall_s`` from launch.
    """

    wall_s: float = 20.0
    cpu_s: float | None = None
    memory_bytes: int = 2 * GiB
    processes: int = 128
    file_size_bytes: int = 1 * GiB
    open_files: int = 256
    tmp_bytes: int = 256 * MiB
    log_bytes: int = 1 * MiB
    shm_bytes: int = 64 * MiB
    uid_processes: int | None = None
    cpus: float | None = None
    start_s: float | None = None

    @property
    def longest_s(self) -> float:
        """The longest the run may last in wall seconds (``start_s`` + ``wall_s``)."""
        return self.wall_s + (self.start_s or 0.0)


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One run in the sandbox: its argv, what it sees (mounts, env, cwd) and its limits.

    ``argv`` and ``mounts`` are kept as tuples and ``env`` as a copy, so a spec never changes
    once made. ``env`` adds to the sandbox's own variables (``PATH``, ``HOME``, ...).

    ``root_tree``: a whole root filesystem tree shown writable at ``/`` (an image build's
    ``RUN`` step) instead of the session's read-only root. The run is uid 0 of its own user
    namespace, which is the slot uid outside, with no capabilities; ``/tmp`` is the tree's
    own; nothing of the host is shown. The tree must belong to the slot (``give``). Only the
    bwrap backend runs such specs.
    """

    argv: Sequence[str]
    mounts: Sequence[Mount] = ()
    limits: Limits = field(default_factory=Limits)
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    cwd: str = "/"
    root_tree: Path | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "argv", tuple(self.argv))
        object.__setattr__(self, "mounts", tuple(self.mounts))
        object.__setattr__(self, "env", dict(self.env))


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one sandboxed run did. Seconds and bytes; ``stdout``/``stderr`` are capped."""

    exit_status: int | None
    signal: int | None = None
    timed_out: bool = False
    memory_exceeded: bool = False
    output_exceeded: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_memory_bytes: int = 0
    stdout: str = ""
    stderr: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    clock_started_s: float | None = None
    """With ``Limits.start_s``: seconds from launch to the byte that started the clock (None:
    the run never started it); ``wall_s`` - ``clock_started_s`` is the clocked time."""

    @property
    def clocked_s(self) -> float:
        """Seconds the run lasted on its clock (all of ``wall_s`` without a clock start)."""
        return self.wall_s - (self.clock_started_s or 0.0)

    @property
    def succeeded(self) -> bool:
        """True when the command exited 0 within every limit."""
        return (
            self.exit_status == 0
            and not self.timed_out
            and not self.memory_exceeded
            and self.signal is None
        )

    def describe(self) -> str:
        """A one-line reason for a failed run, for participant diagnostics."""
        if self.timed_out:
            return "timed out"
        if self.memory_exceeded:
            return "exceeded the memory limit"
        if self.signal is not None:
            return f"killed by signal {self.signal}"
        if self.exit_status != 0:
            return f"exited with status {self.exit_status}"
        return "succeeded"


CANCELLED = Outcome(exit_status=None, signal=int(signal.SIGKILL), notes=("cancelled",))
"""What a run of a cancelled session returns without starting anything."""


class SandboxSession(ABC):
    """The sandbox as one job sees it: a claimed ``slot``, its runs, workspaces and cancel.

    Thread-safe: cases of a job may run concurrently in one session (from long-lived threads).
    A session is valid only inside the ``with`` block of ``Sandbox.session()``; leaving it
    cancels whatever still runs in it.
    """

    slot: int
    private_root: bool = False
    """True when the session's root filesystem is mounted for it alone (no shared page cache)."""

    @abstractmethod
    def run(self, spec: RunSpec) -> Outcome:
        """Run ``spec`` inside the sandbox as this session's slot; wait for it or its limits.

        Once the session is cancelled, returns ``CANCELLED`` at once without starting anything;
        a run under way when ``cancel()`` is called ends killed (signal 9, note ``cancelled``).
        """

    def run_case(self, spec: RunSpec) -> Outcome:
        """``run`` for one of many short, similar cases of this session (same mounts, env, cwd).

        A backend may start such cases from a case server it keeps per configuration for the
        session (``sandbox.case_server``): the same isolation and limits, enforced from outside,
        but the cases of one server share its network namespace and its ``/tmp`` (emptied
        before each case). Default: ``run``.
        """
        return self.run(spec)

    @abstractmethod
    def run_interactive(self, spec: RunSpec) -> Outcome:
        """Run ``spec`` attached to this terminal (a person's shell, never an entry under test).

        Backends that cannot attach a terminal raise ``UsageError``.
        """

    @abstractmethod
    def workspace(self, path: Path, *, size_bytes: int) -> contextlib.AbstractContextManager[Path]:
        """A writable folder at ``path`` of ``size_bytes`` at most, for this session's runs.

        Leaving the context releases it (unmounts a host tmpfs where one was used); the files
        are gone afterwards, so copy out what you keep.
        """

    @abstractmethod
    def give(self, path: Path) -> None:
        """Make host files under ``path`` writable by this session's runs.

        For files the host copied in (the backend re-owns them to the slot's uid).
        """

    @abstractmethod
    def cancel(self) -> None:
        """Kill every run of this session under way, and every later one as it starts.

        Other sessions, in this process or elsewhere, are untouched. Returns at once; the
        killed runs' ``run`` calls return shortly after.
        """

    @property
    @abstractmethod
    def cancelled(self) -> bool:
        """True once ``cancel()`` was called (or the session was left)."""


class Sandbox(ABC):
    """An isolation backend.

    Jobs use ``session()``: every run, workspace and cancel goes through a session, which
    holds the slot (the unprivileged identity its runs get) for as long as the job lasts.
    """

    name: str = "abstract"

    @abstractmethod
    def session(
        self, root: RootFilesystem | None = None
    ) -> contextlib.AbstractContextManager[SandboxSession]:
        """Claim a free slot for one job; leaving cancels the session's runs and frees the slot.

        ``root``: the root filesystem every run of the session sees (None: the host's
        ``/usr``); as root its image is mounted for this session alone. Raises
        ``PlatformError`` when every slot is busy.
        """

    def cancel_all(self) -> None:  # noqa: B027 (optional hook)
        """Kill every run of this sandbox under way now, in every session.

        They end as killed; later runs start as usual. Prefer ``SandboxSession.cancel``.
        """

    def check(self) -> None:  # noqa: B027 (optional hook)
        """Raise ``SandboxUnavailableError`` (with how to fix the host) if runs cannot work."""

    def release_own(self) -> None:  # noqa: B027 (optional hook)
        """Release what this process still holds on the host (a stopping worker's last step).

        Mounts, loop devices and run cgroups of sessions that did not unwind are let go, as a
        later worker would after a crash. Backends that hold nothing on the host do nothing.
        """


@contextlib.contextmanager
def plain_workspace(path: Path) -> Iterator[Path]:
    """A plain folder used by backends that cannot cap sizes; removed at exit."""
    path.mkdir(parents=True, exist_ok=True)
    try:
        yield path
    finally:
        remove_tree_quietly(path)
