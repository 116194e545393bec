"""The run's own view of host-wide ``/proc`` figures: what a neighbour's activity cannot move.

A new pid namespace hides other processes, but many ``/proc`` files count events of the whole
host: forks (``stat``'s ``processes``), interrupts, pages, open files, inodes, disk I/O, cgroups,
ptys. A job that modulates one of them (forking in timed slots) and a concurrent job that reads
it share a covert channel (issue 15, finding 4). Each such file is shown as a fixed file of the
run's own (a read-only bind over procfs, from a memory file), and folders of host-wide figures
as an empty tmpfs. Static facts programs need stay true: the number of CPUs (``stat``'s ``cpuN``
lines, which glibc counts for ``get_nprocs`` when ``/sys`` is absent), which cgroup controllers
exist, the run's own memory limit as ``MemTotal``. Bubblewrap writes them under the run's file
size limit: one that would not fit is shown empty.

Not masked (documented residuals in ``docs/architecture.md``): the run's own network
namespace's ``/proc/net`` (per-process links, which no bind can cover for every process) still
shows a few host-wide figures (``softnet_stat``, protocol memory), and ``sysinfo(2)`` returns
the host's process count, load and free memory (denying it makes glibc's ``sysconf`` read
uninitialised memory); ``cpuinfo``'s ``cpu MHz`` follows the host's load where the CPU scales its
clock (the file is too large to copy under small file size limits); inode numbers of pipes
and sockets come from a kernel-wide counter.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from proctor.sandbox.base import Limits


@dataclass(frozen=True, slots=True)
class DataFile:
    """A synthetic read-only file shown inside: its content is handed to bwrap through an fd."""

    target: str
    content: bytes


ZEROED = {
    "/proc/loadavg": b"0.00 0.00 0.00 1/1 1\n",
    "/proc/uptime": b"0.00 0.00\n",
    "/proc/locks": b"",
    "/proc/vmstat": b"pgpgin 0\npgpgout 0\npswpin 0\npswpout 0\n",
    "/proc/interrupts": b"",
    "/proc/softirqs": b"",
    "/proc/diskstats": b"",
    "/proc/partitions": b"major minor  #blocks  name\n\n",
    "/proc/swaps": b"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n",
    "/proc/schedstat": b"",
    "/proc/zoneinfo": b"",
    "/proc/buddyinfo": b"",
    "/proc/key-users": b"",
    "/proc/sys/fs/file-nr": b"0\t0\t9223372036854775807\n",
    "/proc/sys/fs/inode-nr": b"0\t0\n",
    "/proc/sys/fs/inode-state": b"0\t0\t0\t0\t0\t0\t0\n",
    "/proc/sys/fs/dentry-state": b"0\t0\t45\t0\t0\t0\n",
    "/proc/sys/fs/aio-nr": b"0\n",
    "/proc/sys/kernel/pty/nr": b"0\n",
    "/proc/sys/kernel/random/entropy_avail": b"256\n",
    "/proc/sys/kernel/hung_task_detect_count": b"0\n",
}
"""Host-wide counters shown at rest: no load, no events, nothing open but the run."""

HIDDEN_DIRS = ("/proc/pressure", "/proc/fs", "/proc/irq", "/proc/sys/fs/quota")
"""Folders of host-wide figures (pressure stalls, file system, interrupt and quota statistics)
shown empty."""


def synthetic_proc(limits: Limits) -> list[DataFile]:
    """The run's own ``/proc`` files, for every host-wide one this kernel has."""
    shown = [DataFile(target, content) for target, content in ZEROED.items()]
    shown += [
        DataFile("/proc/meminfo", _meminfo(limits.memory_bytes)),
        DataFile("/proc/stat", _stat(os.cpu_count() or 1)),
        DataFile("/proc/cgroups", _cgroups()),
    ]
    return [_fitting(item, limits.file_size_bytes) for item in shown if _exists(item.target)]


def _fitting(item: DataFile, file_size_bytes: int) -> DataFile:
    """``item``, or an empty file in its place if it exceeds the run's file size limit.

    Bubblewrap writes it under that limit (``stat`` of a host of many CPUs, a tiny limit).
    """
    return item if len(item.content) <= file_size_bytes else DataFile(item.target, b"")


def hidden_dirs() -> list[str]:
    """The folders of ``HIDDEN_DIRS`` this kernel has."""
    return [folder for folder in HIDDEN_DIRS if Path(folder).is_dir()]


@functools.cache
def _exists(target: str) -> bool:
    return Path(target).exists()


def _meminfo(memory_bytes: int) -> bytes:
    """Memory is the run's own limit, so programs that size themselves from it stay within it."""
    kib = memory_bytes // 1024
    return (
        f"MemTotal:       {kib} kB\nMemFree:        {kib} kB\nMemAvailable:   {kib} kB\n"
        "Buffers:               0 kB\nCached:                0 kB\nSwapTotal:             0 kB\n"
        "SwapFree:              0 kB\n"
    ).encode()


def _stat(cpus: int) -> bytes:
    """``/proc/stat`` of an idle machine with ``cpus`` CPUs, booted at the epoch."""
    zeros = " 0" * 10
    lines = [f"cpu {zeros}", *(f"cpu{n}{zeros}" for n in range(cpus))]
    lines += ["intr 0", "ctxt 0", "btime 0", "processes 1", "procs_running 1"]
    lines += ["procs_blocked 0", "softirq 0 0 0 0 0 0 0 0 0 0 0"]
    return ("\n".join(lines) + "\n").encode()


@functools.cache
def _cgroups() -> bytes:
    """The host's controllers and hierarchies, each counting one cgroup (the run's)."""
    try:
        text = Path("/proc/cgroups").read_text()
    except OSError:
        return b""
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 4 and not line.startswith("#"):
            fields[2] = "1"
        rows.append("\t".join(fields) if len(fields) == 4 else line)
    return ("\n".join(rows) + "\n").encode()
