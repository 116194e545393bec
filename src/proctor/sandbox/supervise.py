"""Start one launcher process and watch it: bounded output, wall clock, CPU budget, tree kill.

Shared by every local backend. The launcher is a chain of small programs that each set one thing
and ``exec`` the next, so no Python runs between ``fork`` and ``exec`` (``preexec_fn`` is unsafe
in threaded workers)::

    dash -c LIMIT_AND_JOIN …   (ulimit builtins, then joins the run's cgroups)
    setpriv --reuid SLOT …     (bwrap backend, when root)
    bwrap …  -- argv

(``launch.launcher_prefix`` builds the first link; see there for the ``prlimit`` fallback.)

The watcher runs in the calling thread and polls a pidfd plus both output pipes, so a trivial
run costs no sleeping and no helper thread. stdout/stderr are pipes read here: each keeps its
first ``Limits.log_bytes`` and discards the rest (``output_exceeded``), so a child writing
hundreds of megabytes grows neither host memory nor disk.

Every run belongs to a ``RunGroup`` (the runs of one session): cancelling the group kills the
run's tree, including a run that was still being launched, and only that group's runs.

A run with ``Limits.start_s`` gets a clock pipe (``ClockPipe``): its wall clock is ``start_s``
until the run writes a byte on the pipe, then ``wall_s`` from that byte, watched here from
outside like the output pipes.

Parent-death signals are tied to the thread that forked (rule 8): call ``run`` from a
long-lived worker thread, never from a short-lived one that ends while the run goes on.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from proctor.sandbox.base import CANCELLED, Limits, Outcome
from proctor.sandbox.cgroups import Cgroup
from proctor.sandbox.runs import RunGroup

CLOCK_FD_VARIABLE = "PROCTOR_CLOCK_FD"
READ_CHUNK = 1 << 16
CPU_POLL_S = 0.1
DRAIN_S = 2.0


@dataclass
class Stream:
    """One output pipe: keeps the first ``cap`` bytes, counts and discards the rest."""

    fd: int
    cap: int
    data: bytearray = field(default_factory=bytearray)
    exceeded: bool = False

    def read(self) -> bool:
        """Read one chunk; False at end of file."""
        try:
            chunk = os.read(self.fd, READ_CHUNK)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        if len(chunk) > room:
            self.exceeded = True
        return True

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


@dataclass(frozen=True, slots=True)
class ClockPipe:
    """The pipe on which a run starts its own wall clock (one byte on ``write_fd``)."""

    read_fd: int
    write_fd: int

    @classmethod
    @contextlib.contextmanager
    def open(cls, limits: Limits) -> Iterator[ClockPipe | None]:
        """A clock pipe for a run with ``limits.start_s``, else None; closed on leaving."""
        if limits.start_s is None:
            yield None
            return
        read_fd, write_fd = os.pipe()
        try:
            yield cls(read_fd, write_fd)
        finally:
            os.close(read_fd)
            os.close(write_fd)

    def env(self) -> dict[str, str]:
        """The variable naming the write end inside the run (its number is kept by exec)."""
        return {CLOCK_FD_VARIABLE: str(self.write_fd)}


@dataclass(eq=False)
class _Watch:
    """State of one watched run."""

    proc: subprocess.Popen[bytes]
    pidfd: int
    streams: dict[int, Stream]
    cgroup: Cgroup | None
    started: float
    timed_out: bool = False
    cpu_exceeded: bool = False
    cancelled: bool = False
    status: int | None = None
    rusage_cpu_s: float = 0.0
    rusage_peak_bytes: int = 0
    clock: ClockPipe | None = None
    clock_started_s: float | None = None

    def cancel(self) -> None:
        """Kill the run's tree on behalf of its group; it reports itself as cancelled."""
        self.cancelled = self.status is None  # a run that had ended already was not cancelled
        _kill_tree(self)


def supervise(
    argv: Sequence[str],
    *,
    limits: Limits,
    cgroup: Cgroup | None,
    env: dict[str, str] | None = None,
    cwd: str = "/",
    pass_fds: Sequence[int] = (),
    runs: RunGroup,
    clock: ClockPipe | None = None,
) -> Outcome:
    """Run the launcher ``argv`` to its end under ``limits`` as a member of ``runs``.

    The caller owns ``cgroup`` and ``clock`` (whose write end must be among ``pass_fds``).
    When ``runs`` is cancelled already, nothing starts and the
    result is ``CANCELLED``; when it is cancelled during the run, the tree is killed and the
    outcome (signal 9) carries the note ``cancelled``.
    """
    if runs.cancelled:
        return CANCELLED
    proc, out_r, err_r = spawn(argv, env=env, cwd=cwd, pass_fds=pass_fds)
    started = time.monotonic()
    streams = {fd: Stream(fd, limits.log_bytes) for fd in (out_r, err_r)}
    watch = _Watch(proc, os.pidfd_open(proc.pid), streams, cgroup, started, clock=clock)
    runs.join(watch.cancel)
    try:
        _watch(watch, limits)
        wall = time.monotonic() - started
        _finish(watch)
    except BaseException:
        if watch.status is None:  # interrupted: never leave the tree running
            _kill_tree(watch)
            _reap(watch)
        raise
    finally:
        runs.leave(watch.cancel)
        os.close(watch.pidfd)
        for fd in streams:
            os.close(fd)
    return _outcome(watch, wall)


def spawn(
    argv: Sequence[str], *, env: dict[str, str] | None, cwd: str, pass_fds: Sequence[int]
) -> tuple[subprocess.Popen[bytes], int, int]:
    """Start the launcher in a new session; returns it and the read ends of its out/err pipes."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        proc = subprocess.Popen(  # noqa: S603 - an argv list built by launch.py, no shell
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=err_w,
            close_fds=True,
            pass_fds=tuple(pass_fds),
            start_new_session=True,
            env=env if env is not None else {},
            cwd=cwd,
        )
    except BaseException:
        for fd in (out_r, err_r):
            os.close(fd)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    return proc, out_r, err_r


def _poller(watch: _Watch) -> select.poll:
    """A poll object on the launcher's pidfd, its output pipes and its clock pipe."""
    poller = select.poll()
    poller.register(watch.pidfd, select.POLLIN)
    for fd in watch.streams:
        os.set_blocking(fd, False)
        poller.register(fd, select.POLLIN)
    if watch.clock is not None:
        poller.register(watch.clock.read_fd, select.POLLIN)
    return poller


def _watch(watch: _Watch, limits: Limits) -> None:
    """Poll until the launcher exits, killing the tree at the wall or CPU limit."""
    poller = _poller(watch)
    unclocked = watch.clock is not None and limits.start_s is not None
    deadline = watch.started + (limits.longest_s - limits.wall_s if unclocked else limits.wall_s)
    cpu_limit = limits.cpu_s if limits.cpu_s is not None else limits.longest_s
    poll_cpu = watch.cgroup is not None
    while watch.status is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0 and not watch.timed_out:
            watch.timed_out = True
            _kill_tree(watch)
        if watch.timed_out:
            remaining = CPU_POLL_S  # killed: only waiting for the launcher to be reaped
        wait = min(remaining, CPU_POLL_S) if poll_cpu else remaining
        for fd, _ in poller.poll(max(wait, 0.0) * 1000):
            if fd == watch.pidfd:
                _reap(watch)
            elif watch.clock is not None and fd == watch.clock.read_fd:
                poller.unregister(fd)
                deadline = _start_clock(watch, limits)
            elif not watch.streams[fd].read():
                poller.unregister(fd)
        if poll_cpu and watch.status is None:
            _check_cpu(watch, cpu_limit)


def _check_cpu(watch: _Watch, cpu_limit: float) -> None:
    """Kill the tree once the run's cgroup has used more than ``cpu_limit`` CPU seconds."""
    if watch.cpu_exceeded or watch.cgroup is None:
        return
    used = watch.cgroup.cpu_seconds()
    if used is not None and used > cpu_limit:
        watch.cpu_exceeded = True
        _kill_tree(watch)


def _start_clock(watch: _Watch, limits: Limits) -> float:
    """The run wrote on its clock pipe: from now on it has ``wall_s``; the new deadline.

    A byte read after the run was killed at ``start_s`` starts nothing (as on a case server).
    """
    now = time.monotonic()
    if watch.clock is not None:
        with contextlib.suppress(BlockingIOError):
            os.read(watch.clock.read_fd, 1)
    if watch.timed_out:  # a byte after the kill: the run never started its clock in time
        return now + CPU_POLL_S
    watch.clock_started_s = now - watch.started
    return now + limits.wall_s


def _reap(watch: _Watch) -> None:
    """Collect the launcher's status and resource usage (fallback when there is no cgroup)."""
    _, status, usage = os.wait4(watch.proc.pid, 0)
    watch.status = os.waitstatus_to_exitcode(status)
    watch.proc.returncode = watch.status
    watch.rusage_cpu_s = usage.ru_utime + usage.ru_stime
    watch.rusage_peak_bytes = usage.ru_maxrss * 1024


def _kill_tree(watch: _Watch) -> None:
    """SIGKILL the launcher's process group and every process of the run's cgroup."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(watch.proc.pid, signal.SIGKILL)
    if watch.cgroup is not None:
        watch.cgroup.kill()


def _finish(watch: _Watch) -> None:
    """After the launcher exits: kill stragglers, then drain the pipes (bounded in time)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(watch.proc.pid, signal.SIGKILL)
    if watch.cgroup is not None:
        watch.cgroup.kill()
    open_fds = dict(watch.streams)
    deadline = time.monotonic() + DRAIN_S
    while open_fds and time.monotonic() < deadline:
        ready, _, _ = select.select(list(open_fds), [], [], deadline - time.monotonic())
        for fd in ready:
            if not open_fds[fd].read():
                del open_fds[fd]


def _outcome(watch: _Watch, wall: float) -> Outcome:
    """Translate the launcher's status and the cgroup's accounting into an ``Outcome``."""
    status = watch.status if watch.status is not None else -signal.SIGKILL
    exit_status: int | None = status
    sig: int | None = None
    if status < 0:  # the launcher itself was killed (by the wall clock, usually)
        exit_status, sig = None, -status
    elif 128 < status < 128 + signal.NSIG:  # bwrap and shells report a signal as 128 + N
        exit_status, sig = None, status - 128
    usage = watch.cgroup.usage() if watch.cgroup is not None else None
    cpu_s = usage.cpu_s if usage and usage.cpu_s is not None else watch.rusage_cpu_s
    peak = usage.peak_memory_bytes if usage and usage.peak_memory_bytes else 0
    notes: list[str] = ["cancelled"] if watch.cancelled else []
    if watch.cpu_exceeded or sig == signal.SIGXCPU:
        notes.append("cpu time limit reached")
    out, err = watch.streams.values()
    if out.exceeded or err.exceeded:
        notes.append("output truncated")
    return Outcome(
        exit_status=exit_status,
        signal=sig,
        timed_out=watch.timed_out or watch.cpu_exceeded or sig == signal.SIGXCPU,
        memory_exceeded=bool(usage and usage.oom_killed),
        output_exceeded=out.exceeded or err.exceeded,
        wall_s=wall,
        cpu_s=cpu_s,
        peak_memory_bytes=peak or watch.rusage_peak_bytes,
        stdout=out.text(),
        stderr=err.text(),
        notes=tuple(notes),
        clock_started_s=watch.clock_started_s,
    )
