"""Case servers: one sandbox per job and configuration that starts many short cases in turn.

Launching a sandbox costs tens of milliseconds (namespaces, mounts, their teardown); a records
exam runs thousands of cases of a few milliseconds each. A ``CaseServer`` is one sandbox, set up
exactly as a single run would be (same mounts, environment, root, seccomp filter, slot uid),
whose command is the trusted ``case_server_inner`` script. Each case is a process that script
forks on request; everything that limits the case is done on the host, from outside (here, and
in ``case_watch`` for the watching of one case):

* the case moves itself into the server's *case cgroup* (memory incl. swap, pids, CPU
  accounting) before it may exec, through the cgroup's ``tasks`` files that the host opens and
  passes with the request (the case closes them before it execs);
* the wall clock and the CPU budget are watched on the host; at either limit, and when the
  case's first process ends, every member of the case cgroup is SIGKILLed (background
  processes included), so nothing of one case runs on into the next;
* rlimits (CPU, processes, file size, open files, core) are set in the case before it execs;
* stdout/stderr are pipes made here per case and capped as for any run;
* a case with ``Limits.start_s`` gets a clock pipe as a run of its own does (its write end is
  descriptor ``CLOCK_FD`` in the case, named by ``PROCTOR_CLOCK_FD``): ``start_s`` seconds until
  its first byte, then ``wall_s``, watched on the host.

A server's configuration fixes the mounts, environment, working folder, memory, processes and
CPU share; the wall clock, the CPU budget and the clock pipe are the case's own (``run``).

What cases of one server share: the sandbox's ``/tmp`` and ``/dev/shm`` (emptied by the
server before each case), its network namespace (loopback only) and the server itself. They
are cases of one entry on one task in one job, which already share the writable home and see
every input of the split at ``/data``, so this opens no channel between evaluations; servers
are never shared between sessions (jobs). The case cgroup is reused: pages a case leaves in
``/tmp`` stay charged to it, so when more than ``RECYCLE_FRACTION`` of the memory limit is still
charged after a case, a fresh cgroup replaces it. A server that stops answering is killed with
its sandbox (``ServerBrokenError``), and the session's ``case_pool.CasePool`` runs the case in
a sandbox of its own.
"""

from __future__ import annotations

import array
import contextlib
import dataclasses
import marshal
import os
import resource
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from proctor.sandbox import case_server_inner
from proctor.sandbox.base import CANCELLED, Limits, Outcome, RunSpec
from proctor.sandbox.bwrap_args import sandbox_env
from proctor.sandbox.case_watch import (
    ServedCase,
    ServerBrokenError,
    ServerLink,
    case_outcome,
    end_case,
    watch_case,
)
from proctor.sandbox.cgroups import Cgroup, CgroupHost
from proctor.sandbox.launch import PROCESS_SLACK, Rlimits
from proctor.sandbox.runs import RunGroup
from proctor.sandbox.supervise import CLOCK_FD_VARIABLE, Stream, spawn

RECYCLE_FRACTION = 0.125
SERVER_LIFETIME_S = 7 * 24 * 3600.0
PYTHON = "/usr/bin/python3"
MARSHAL_VERSION = 2
"""Requests use a ``marshal`` format every Python 3 reads (dicts, lists, strings, numbers
and booleans only); the server's script itself needs Python 3.7 or later (an older root's
server breaks on its first case and the session's cases run in sandboxes of their own)."""


class Launching(Protocol):
    """What a case server needs of its backend (``BwrapSandbox``)."""

    cgroups: CgroupHost

    def launcher(
        self,
        spec: RunSpec,
        *,
        slot: int,
        root_dir: Path | None,
        cgroup: Cgroup | None,
        fds: list[int],
    ) -> list[str]:
        """The launch chain of one sandbox running ``spec``."""
        ...


def _source() -> str:
    return Path(case_server_inner.__file__).read_text(encoding="utf-8")


def _new_cgroup(host: CgroupHost, limits: Limits) -> Cgroup:
    cgroup = host.create(
        memory_bytes=limits.memory_bytes,
        processes=limits.processes + PROCESS_SLACK,
        cpus=limits.cpus,
    )
    if cgroup is None:
        raise ServerBrokenError("no cgroup could be created for a case server")
    return cgroup


def case_rlimits(limits: Limits, cgroup: Cgroup) -> list[tuple[int, int, int]]:
    """(resource, soft, hard) of a case's rlimits; address space only without a memory cgroup."""
    rl = Rlimits.of(limits, address_space=not cgroup.limits_memory)
    rows = [
        (resource.RLIMIT_CPU, rl.cpu_soft_s, rl.cpu_hard_s),
        (resource.RLIMIT_NPROC, rl.processes, rl.processes),
        (resource.RLIMIT_FSIZE, rl.file_size_bytes, rl.file_size_bytes),
        (resource.RLIMIT_NOFILE, rl.open_files, rl.open_files),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if rl.address_space_bytes is not None:
        rows.append((resource.RLIMIT_AS, rl.address_space_bytes, rl.address_space_bytes))
    return rows


def _launch(
    backend: Launching, configuration: RunSpec, slot: int, root_dir: Path | None, cgroup: Cgroup
) -> tuple[subprocess.Popen[bytes], socket.socket]:
    """Start a server's sandbox; its launcher process and the host's end of its socket.

    ``configuration``: the mounts, env, cwd and (server) limits; its argv is not used.
    """
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    fds: list[int] = []
    try:
        variable = {case_server_inner.FD_VARIABLE: str(theirs.fileno())}
        server = dataclasses.replace(
            configuration,
            argv=[PYTHON, "-I", "-S", "-c", _source()],
            env={**configuration.env, **variable},
        )
        launcher = backend.launcher(server, slot=slot, root_dir=root_dir, cgroup=cgroup, fds=fds)
        proc, out_r, err_r = spawn(launcher, env=None, cwd="/", pass_fds=[*fds, theirs.fileno()])
    except BaseException:
        mine.close()
        raise
    finally:
        theirs.close()
        for fd in fds:
            os.close(fd)
    for fd in (out_r, err_r):  # the server itself writes nothing a case needs
        os.close(fd)
    return proc, mine


class CaseServer:
    """One sandbox that runs the cases of one configuration, one at a time."""

    def __init__(
        self, backend: Launching, configuration: RunSpec, *, slot: int, root_dir: Path | None
    ) -> None:
        """Start a server for the cases of ``configuration`` (its argv is not used)."""
        self._host = backend.cgroups
        limits = configuration.limits
        self._limits = limits
        self._env = sandbox_env(configuration.env)
        self._cwd = configuration.cwd
        server_limits = dataclasses.replace(
            limits, wall_s=SERVER_LIFETIME_S, cpu_s=None, start_s=None
        )
        self._control = _new_cgroup(self._host, server_limits)
        self._cases = _new_cgroup(self._host, limits)
        self._joins: list[int] = []
        self._baseline: tuple[float, int] | None = None  # the case cgroup's CPU s, OOM kills
        try:
            self._joins = _open_joins(self._cases)
            server = dataclasses.replace(configuration, limits=server_limits)
            self._proc, self._ctl = _launch(backend, server, slot, root_dir, self._control)
        except BaseException:
            self._remove_cgroups()
            raise
        self._pidfd = os.pidfd_open(self._proc.pid)
        self._lock = threading.Lock()
        self.broken = False
        self.served = False  # True once a case has run to its end here

    def run(self, case_spec: RunSpec, *, runs: RunGroup) -> Outcome:
        """Run one case to its end: this server's configuration, the case's own clock.

        ``case_spec`` gives the argv and the case's ``wall_s``, ``cpu_s`` and ``start_s``; the
        rest of it must be the configuration the server was started with. Raises
        ``ServerBrokenError`` (the server is killed) when the server misbehaves.
        """
        if runs.cancelled:
            return CANCELLED
        limits = case_spec.limits
        try:
            case = self._start(list(case_spec.argv), limits)
        except BaseException:
            self.close()
            raise
        kill = self._cancel_kill(case)
        runs.join(kill)
        try:
            watch_case(case, limits, ServerLink(self._cases, self._ctl, self._pidfd))
            wall = time.monotonic() - case.started
            end_case(case, self._cases)
        except BaseException:
            self.close()
            raise
        finally:
            runs.leave(kill)
            for fd in (*case.streams, *(case.clock or ())):
                os.close(fd)
        self.served = True
        outcome = case_outcome(case, wall, self._cases)
        self._baseline = (case.cpu_end, case.oom_end)  # the cgroup stays empty until the next
        self._recycle()
        return outcome

    def _cancel_kill(self, case: ServedCase) -> Callable[[], None]:
        def kill() -> None:
            case.cancelled = case.status is None
            self._cases.kill()

        return kill

    def _start(self, argv: list[str], limits: Limits) -> ServedCase:
        """Send the request with the case's pipes and cgroup files; the case joins and execs."""
        ours: list[int] = []  # read ends, kept on success
        theirs: list[int] = []  # write ends, always closed here once sent
        try:
            out_r, out_w = os.pipe()
            ours.append(out_r)
            theirs.append(out_w)
            err_r, err_w = os.pipe()
            ours.append(err_r)
            theirs.append(err_w)
            clock = os.pipe() if limits.start_s is not None else None
            if clock is not None:
                ours += clock  # the host keeps the write end open too, as supervise does
            cpu_base, oom_base = self._baseline or (
                self._cases.cpu_seconds() or 0.0,
                self._cases.oom_kills(),
            )
            case = ServedCase(
                {fd: Stream(fd, limits.log_bytes) for fd in (out_r, err_r)},
                cpu_base,
                oom_base,
                clock=clock,
            )
            self._cases.reset_peak()
            clock_w = [clock[1]] if clock is not None else []
            self._send(argv, case, limits, [out_w, err_w, *clock_w, *self._joins])
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        case.started = time.monotonic()
        return case

    def _send(self, argv: list[str], case: ServedCase, limits: Limits, fds: list[int]) -> None:
        """The request of ``case`` with its descriptors (``ServerBrokenError`` if refused)."""
        env = dict(self._env)
        if case.clock is not None:
            env[CLOCK_FD_VARIABLE] = str(case_server_inner.CLOCK_FD)
        request: dict[str, object] = {
            "argv": argv,
            "env": env,
            "cwd": self._cwd,
            "clock": case.clock is not None,
            "rlimits": case_rlimits(limits, self._cases),
        }
        try:
            self._ctl.sendmsg(
                [marshal.dumps(request, MARSHAL_VERSION)],
                [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))],
            )
        except OSError as error:
            raise ServerBrokenError(f"the case server refused a request: {error}") from error

    def _recycle(self) -> None:
        """A fresh case cgroup when the last cases left much memory charged to this one.

        When none can be made, the server ends (the case's outcome stands; the pool drops
        the server and the next case gets another).
        """
        charged = self._cases.memory_now()
        if charged is None or charged <= RECYCLE_FRACTION * self._limits.memory_bytes:
            return
        try:
            fresh = _new_cgroup(self._host, self._limits)
        except (ServerBrokenError, OSError):
            self.close()
            return
        try:
            joins = _open_joins(fresh)
        except OSError:
            fresh.remove()
            self.close()
            return
        _close_all(self._joins)
        old, self._cases, self._joins, self._baseline = self._cases, fresh, joins, None
        old.remove()

    def close(self) -> None:
        """End the server: close its socket, kill its sandbox, remove its cgroups."""
        with self._lock:
            if self.broken:
                return
            self.broken = True
        self._ctl.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)
        self._remove_cgroups()
        self._proc.wait()
        os.close(self._pidfd)

    def _remove_cgroups(self) -> None:
        _close_all(self._joins)
        self._joins = []
        self._cases.remove()
        self._control.remove()


def _open_joins(cgroup: Cgroup) -> list[int]:
    """The case cgroup's join files, open for writing: sent with every case's request.

    Opened once per case cgroup; the server closes what it receives, and each case closes
    them before it execs.
    """
    opened: list[int] = []
    try:
        for path in cgroup.join_files:
            opened.append(os.open(path, os.O_WRONLY | os.O_CLOEXEC))
    except BaseException:
        _close_all(opened)
        raise
    return opened


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
