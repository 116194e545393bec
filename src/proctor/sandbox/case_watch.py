"""Watching one case of a case server from the host, from its request to its ``Outcome``.

The host side of a case mirrors ``supervise`` for a run of its own: the case's stdout and
stderr pipes are read and capped, the wall clock (``start_s`` until the case's clock byte, then
``wall_s``) and the case cgroup's CPU time are checked, and at a limit, on cancel and at the
case's end every member of the case cgroup is SIGKILLed. The server's part is one message on
the control socket, ``exit STATUS``; a server that ends, answers anything else or does not
report a killed case within ``REPLY_S`` is broken (``ServerBrokenError``), and its owner
(``case_server.CaseServer``) kills it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import select
import signal
import socket
import time

from proctor.sandbox.base import Limits, Outcome
from proctor.sandbox.cgroups import Cgroup
from proctor.sandbox.supervise import CPU_POLL_S, DRAIN_S, Stream

REPLY_S = 5.0
"""Seconds the server may take to answer a request before it is presumed broken."""


class ServerBrokenError(Exception):
    """The case server stopped answering; it has been killed."""


@dataclasses.dataclass(frozen=True, slots=True)
class ServerLink:
    """What watching a case needs of its server: the case cgroup, the socket, the pidfd."""

    cases: Cgroup
    ctl: socket.socket
    pidfd: int


@dataclasses.dataclass(eq=False)
class ServedCase:
    """One case under way: its pipes, start, baselines and what happened."""

    streams: dict[int, Stream]
    cpu_base: float
    oom_base: int
    clock: tuple[int, int] | None = None  # (read, write) ends of the case's clock pipe
    clock_started_s: float | None = None
    started: float = 0.0
    status: int | None = None
    timed_out: bool = False
    cpu_exceeded: bool = False
    cancelled: bool = False
    cpu_end: float = 0.0  # the case cgroup's CPU seconds and OOM kills once the case ended
    oom_end: int = 0


def watch_case(case: ServedCase, limits: Limits, link: ServerLink) -> None:
    """Poll the case's pipes and the server until the case ends, enforcing its limits."""
    poller = _poller(case, link)
    unclocked = case.clock is not None and limits.start_s is not None
    first_s = limits.longest_s - limits.wall_s if unclocked else limits.wall_s
    deadline = case.started + first_s
    cpu_limit = limits.cpu_s if limits.cpu_s is not None else limits.longest_s
    cpu_checked = case.started
    while case.status is None:
        deadline = _enforce_clock(case, deadline, link.cases)
        remaining = deadline - time.monotonic()
        for fd, _ in poller.poll(min(max(remaining, 0.0), CPU_POLL_S) * 1000):
            if case.clock is not None and fd == case.clock[0]:
                poller.unregister(fd)
                deadline = _clock_started(case, limits, deadline)
            else:
                _event(case, fd, poller, link)
        # the CPU budget is checked every CPU_POLL_S while the case runs, however often it
        # writes output (a case that ended is accounted in its outcome)
        if case.status is not None or case.cpu_exceeded:
            continue
        if time.monotonic() - cpu_checked < CPU_POLL_S:
            continue
        cpu_checked = time.monotonic()
        if (link.cases.cpu_seconds() or 0.0) - case.cpu_base > cpu_limit:
            case.cpu_exceeded = True
            link.cases.kill()


def _poller(case: ServedCase, link: ServerLink) -> select.poll:
    """A poll object on the case's output and clock pipes, the socket and the server."""
    poller = select.poll()
    clock = [case.clock[0]] if case.clock is not None else []
    for fd in (*case.streams, *clock, link.ctl.fileno(), link.pidfd):
        poller.register(fd, select.POLLIN)
    for fd in case.streams:
        os.set_blocking(fd, False)
    return poller


def _enforce_clock(case: ServedCase, deadline: float, cases: Cgroup) -> float:
    """Kill the case at its deadline (and on cancel); the deadline to wait for next.

    After the kill the server has ``REPLY_S`` to report the case's end, or it is broken.
    """
    if time.monotonic() >= deadline and not case.timed_out:
        case.timed_out = True
        cases.kill()
        return time.monotonic() + REPLY_S
    if case.timed_out:
        if time.monotonic() >= deadline:
            raise ServerBrokenError("the case server did not report a killed case")
        cases.kill()  # again: nothing may join the cgroup after the first kill
    elif case.cancelled:
        cases.kill()
    return deadline


def _clock_started(case: ServedCase, limits: Limits, deadline: float) -> float:
    """The case wrote on its clock pipe: ``wall_s`` from now on (unless already killed)."""
    now = time.monotonic()
    if case.clock is not None:
        with contextlib.suppress(BlockingIOError):
            os.read(case.clock[0], 1)
    if case.timed_out:
        return deadline
    case.clock_started_s = now - case.started
    return now + limits.wall_s


def _event(case: ServedCase, fd: int, poller: select.poll, link: ServerLink) -> None:
    """One readable descriptor: the server ended, answered, or the case wrote output."""
    if fd == link.pidfd:
        raise ServerBrokenError("the case server ended")
    if fd == link.ctl.fileno():
        message = link.ctl.recv(256).decode("ascii", "replace")
        if message == "nojoin":
            raise ServerBrokenError("a case could not join its cgroup")
        if not message.startswith("exit "):
            raise ServerBrokenError(f"the case server answered {message!r}")
        case.status = os.waitstatus_to_exitcode(int(message.split()[1]))
    elif not case.streams[fd].read():
        poller.unregister(fd)


def end_case(case: ServedCase, cases: Cgroup) -> None:
    """Kill what the case left running and drain its pipes (bounded in time)."""
    cases.kill()
    open_fds = dict(case.streams)
    deadline = time.monotonic() + DRAIN_S
    while open_fds and time.monotonic() < deadline:
        ready, _, _ = select.select(list(open_fds), [], [], deadline - time.monotonic())
        for fd in ready:
            if not open_fds[fd].read():
                del open_fds[fd]


def case_outcome(case: ServedCase, wall: float, cases: Cgroup) -> Outcome:
    """The case's ``Outcome``: its status, limits reached and the case cgroup's accounting.

    Read once the case cgroup is empty (``end_case``); the figures stay in ``case``
    (``cpu_end``, ``oom_end``): the next case of the same cgroup starts from them.
    """
    status = case.status if case.status is not None else -signal.SIGKILL
    exit_status: int | None = status
    sig: int | None = None
    if status < 0:
        exit_status, sig = None, -status
    case.cpu_end = cases.cpu_seconds() or 0.0
    case.oom_end = cases.oom_kills()
    notes = ["cancelled"] if case.cancelled else []
    if case.cpu_exceeded or sig == signal.SIGXCPU:
        notes.append("cpu time limit reached")
    out, err = case.streams.values()
    if out.exceeded or err.exceeded:
        notes.append("output truncated")
    return Outcome(
        exit_status=exit_status,
        signal=sig,
        timed_out=case.timed_out or case.cpu_exceeded or sig == signal.SIGXCPU,
        memory_exceeded=case.oom_end > case.oom_base,
        output_exceeded=out.exceeded or err.exceeded,
        wall_s=wall,
        cpu_s=case.cpu_end - case.cpu_base,
        peak_memory_bytes=cases.peak_bytes() or 0,
        stdout=out.text(),
        stderr=err.text(),
        notes=tuple(notes),
        clock_started_s=case.clock_started_s,
    )
