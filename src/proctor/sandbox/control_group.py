"""One control group of a run: its limits, its accounting, the kill of everything in it.

``Cgroup`` is one run's group in every controller it got: ``CgroupV1`` (a folder per
controller) and ``CgroupV2`` (one folder in the unified hierarchy) write its memory, pids and
CPU limits and read back CPU seconds, peak memory and OOM kills. Where those groups live and
how they are made and reaped is ``cgroups.CgroupHost``'s business.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

CPU_PERIOD_US = 100_000
KILL_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True)
class Usage:
    """What a cgroup measured: CPU seconds, peak bytes (``None`` when not measured), OOM kill."""

    cpu_s: float | None
    peak_memory_bytes: int | None
    oom_killed: bool


READ_BYTES = 1 << 16
"""Enough for any cgroup or ``/proc`` figure read here (one ``read``, as the kernel fills it)."""


def read_file(path: Path) -> str | None:
    """The text of a small kernel file (a cgroup's figure), or None if it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, READ_BYTES).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def write_file(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
    except OSError:
        return False
    return True


def _keyed(text: str | None, key: str) -> int | None:
    """The integer after ``key`` in a ``key value`` per line file (``memory.events``)."""
    for line in (text or "").splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return None


def _pids(folder: Path) -> list[int]:
    text = read_file(folder / "cgroup.procs") or ""
    return [int(p) for p in text.split() if p.isdigit()]


def kill_members(folders: list[Path]) -> None:
    """SIGKILL every process in ``folders`` until all are empty (bounded by KILL_TIMEOUT_S)."""
    deadline = time.monotonic() + KILL_TIMEOUT_S
    while time.monotonic() < deadline:
        members = [pid for folder in folders for pid in _pids(folder)]
        if not members:
            return
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)


def remove_group(folder: Path) -> None:
    """Rmdir a cgroup folder, retrying briefly while the kernel finishes releasing it."""
    for _ in range(100):
        try:
            folder.rmdir()
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)
        else:
            return


class Cgroup(ABC):
    """One run's cgroup (one folder per controller in v1). Thread-confined to its run."""

    def __init__(self, folders: dict[str, Path]) -> None:
        self.folders = folders

    join_file = "cgroup.procs"

    @property
    def join_files(self) -> list[Path]:
        """The files a single-threaded launcher writes ``0`` (itself) into to join the run."""
        return [folder / self.join_file for folder in dict.fromkeys(self.folders.values())]

    @property
    def limits_memory(self) -> bool:
        """True when the memory limit is enforced here (else use RLIMIT_AS)."""
        return "memory" in self.folders

    @abstractmethod
    def apply(self, *, memory_bytes: int, processes: int, cpus: float | None = None) -> None:
        """Set the memory (bytes, swap included) and task-count limits."""

    @abstractmethod
    def cpu_seconds(self) -> float | None:
        """CPU seconds used so far by every process that ever ran in the cgroup."""

    def usage(self) -> Usage:
        """CPU seconds, peak memory and whether the OOM killer struck."""
        return Usage(self.cpu_seconds(), self.peak_bytes(), self.oom_kills() > 0)

    @abstractmethod
    def peak_bytes(self) -> int | None:
        """The most bytes charged at once since the peak was last reset (None: unmeasured)."""

    @abstractmethod
    def oom_kills(self) -> int:
        """How many processes the OOM killer killed here so far."""

    @abstractmethod
    def memory_now(self) -> int | None:
        """Bytes charged now (pages the members left in tmpfs included), None if unmeasured."""

    @abstractmethod
    def reset_peak(self) -> None:
        """Start the peak-memory figure afresh (a cgroup reused for the next case)."""

    def kill(self) -> None:
        """SIGKILL every member and wait until the cgroup is empty."""
        kill_members(list(dict.fromkeys(self.folders.values())))

    def remove(self) -> None:
        """Kill what is left, then delete the folders (best effort)."""
        self.kill()
        for folder in dict.fromkeys(self.folders.values()):
            remove_group(folder)


class CgroupV1(Cgroup):
    """A run's cgroups on a v1 host: memory, pids and cpuacct folders.

    The launcher joins through the per-thread ``tasks`` file: a process moving its own (only)
    thread skips the kernel's global threadgroup lock (Linux 5.17+), whose write side waits
    for an RCU grace period. Through ``cgroup.procs`` that wait cost ~12 ms per run here
    whenever runs were not back to back; a single-threaded process moves whole either way.
    """

    join_file = "tasks"

    def apply(self, *, memory_bytes: int, processes: int, cpus: float | None = None) -> None:
        memory = self.folders.get("memory")
        if memory is not None:
            write_file(memory / "memory.limit_in_bytes", str(memory_bytes))
            write_file(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
        pids = self.folders.get("pids")
        if pids is not None:
            write_file(pids / "pids.max", str(processes))
        cpu = self.folders.get("cpu")
        if cpu is not None and cpus is not None:
            write_file(cpu / "cpu.cfs_period_us", str(CPU_PERIOD_US))
            write_file(cpu / "cpu.cfs_quota_us", str(int(cpus * CPU_PERIOD_US)))

    def cpu_seconds(self) -> float | None:
        folder = self.folders.get("cpuacct")
        text = read_file(folder / "cpuacct.usage") if folder else None
        return int(text) / 1e9 if text and text.strip().isdigit() else None

    def peak_bytes(self) -> int | None:
        memory = self.folders.get("memory")
        peak = read_file(memory / "memory.max_usage_in_bytes") if memory else None
        return int(peak) if peak and peak.strip().isdigit() else None

    def oom_kills(self) -> int:
        memory = self.folders.get("memory")
        if memory is None:
            return 0
        kills = _keyed(read_file(memory / "memory.oom_control"), "oom_kill")
        if kills is None:  # kernels before 4.13: fall back to the failure counter
            kills = int((read_file(memory / "memory.failcnt") or "0").strip() or 0)
        return kills

    def memory_now(self) -> int | None:
        memory = self.folders.get("memory")
        text = read_file(memory / "memory.usage_in_bytes") if memory else None
        return int(text) if text and text.strip().isdigit() else None

    def reset_peak(self) -> None:
        memory = self.folders.get("memory")
        if memory is not None:
            write_file(memory / "memory.max_usage_in_bytes", "0")


class CgroupV2(Cgroup):
    """A run's cgroup on a v2 (unified) host; controllers present as the host allows.

    Joining takes the global threadgroup lock (an RCU grace period, several ms) unless the
    hierarchy is mounted with ``favordynmods`` (Linux 6.0+), which operators may enable.
    """

    def apply(self, *, memory_bytes: int, processes: int, cpus: float | None = None) -> None:
        folder = self.folders["cpu"]
        if cpus is not None and (folder / "cpu.max").exists():
            write_file(folder / "cpu.max", f"{int(cpus * CPU_PERIOD_US)} {CPU_PERIOD_US}")
        if "memory" in self.folders:
            write_file(folder / "memory.max", str(memory_bytes))
            write_file(folder / "memory.swap.max", "0")
        if "pids" in self.folders:
            write_file(folder / "pids.max", str(processes))

    def cpu_seconds(self) -> float | None:
        usec = _keyed(read_file(self.folders["cpu"] / "cpu.stat"), "usage_usec")
        return usec / 1e6 if usec is not None else None

    def peak_bytes(self) -> int | None:
        peak = read_file(self.folders["cpu"] / "memory.peak")
        return int(peak) if peak and peak.strip().isdigit() else None

    def oom_kills(self) -> int:
        return _keyed(read_file(self.folders["cpu"] / "memory.events"), "oom_kill") or 0

    def memory_now(self) -> int | None:
        text = read_file(self.folders["cpu"] / "memory.current")
        return int(text) if text and text.strip().isdigit() else None

    def reset_peak(self) -> None:
        write_file(self.folders["cpu"] / "memory.peak", "reset")  # Linux 6.12+; else lifetime peak

    def kill(self) -> None:
        write_file(self.folders["cpu"] / "cgroup.kill", "1")  # kernel 5.14+; the loop covers older
        super().kill()
