"""Per-run control groups: memory and pids limits, CPU and peak-memory accounting, tree kill.

Two layouts are supported and detected from ``cgroup_root`` (``Settings.cgroup_root``):

* cgroup v1 (``ROOT/memory``, ``ROOT/pids``, ``ROOT/cpuacct`` mounted separately): each run gets
  ``ROOT/CTRL/<own cgroup>/proctor/<name>`` in every writable controller, so the limits of the
  cgroup the worker itself lives in still apply above ours.
* cgroup v2 (``ROOT/cgroup.controllers`` exists): each run gets ``ROOT/proctor/<name>``; the
  ``memory``, ``pids`` and ``cpu`` controllers are enabled where the host allows it.

Where nothing is writable, ``CgroupHost.create`` returns ``None`` and callers fall back to
rlimits (the address-space limit then stands in for the memory cgroup).

Run names are ``<worker pid>-<random>``: ``CgroupHost.reconcile`` removes only the leftovers of
workers that are gone, so two workers on one host never reap each other's runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from proctor.host import pid_alive

PARENT = "proctor"
V1_CONTROLLERS = ("memory", "pids", "cpuacct", "cpu")
V2_CONTROLLERS = ("memory", "pids", "cpu")
CPU_PERIOD_US = 100_000
KILL_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True)
class Usage:
    """What a cgroup measured: CPU seconds, peak bytes (``None`` when not measured), OOM kill."""

    cpu_s: float | None
    peak_memory_bytes: int | None
    oom_killed: bool


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _write(path: Path, value: str) -> bool:
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
    text = _read(folder / "cgroup.procs") or ""
    return [int(p) for p in text.split() if p.isdigit()]


def _kill_members(folders: list[Path]) -> None:
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


def _remove(folder: Path) -> None:
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

    @abstractmethod
    def usage(self) -> Usage:
        """CPU seconds, peak memory and whether the OOM killer struck."""

    def kill(self) -> None:
        """SIGKILL every member and wait until the cgroup is empty."""
        _kill_members(list(dict.fromkeys(self.folders.values())))

    def remove(self) -> None:
        """Kill what is left, then delete the folders (best effort)."""
        self.kill()
        for folder in dict.fromkeys(self.folders.values()):
            _remove(folder)


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
            _write(memory / "memory.limit_in_bytes", str(memory_bytes))
            _write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
        pids = self.folders.get("pids")
        if pids is not None:
            _write(pids / "pids.max", str(processes))
        cpu = self.folders.get("cpu")
        if cpu is not None and cpus is not None:
            _write(cpu / "cpu.cfs_period_us", str(CPU_PERIOD_US))
            _write(cpu / "cpu.cfs_quota_us", str(int(cpus * CPU_PERIOD_US)))

    def cpu_seconds(self) -> float | None:
        folder = self.folders.get("cpuacct")
        text = _read(folder / "cpuacct.usage") if folder else None
        return int(text) / 1e9 if text and text.strip().isdigit() else None

    def usage(self) -> Usage:
        memory = self.folders.get("memory")
        if memory is None:
            return Usage(self.cpu_seconds(), None, False)
        peak = _read(memory / "memory.max_usage_in_bytes")
        kills = _keyed(_read(memory / "memory.oom_control"), "oom_kill")
        if kills is None:  # kernels before 4.13: fall back to the failure counter
            kills = int((_read(memory / "memory.failcnt") or "0").strip() or 0)
        return Usage(
            self.cpu_seconds(), int(peak) if peak and peak.strip().isdigit() else None, kills > 0
        )


class CgroupV2(Cgroup):
    """A run's cgroup on a v2 (unified) host; controllers present as the host allows.

    Joining takes the global threadgroup lock (an RCU grace period, several ms) unless the
    hierarchy is mounted with ``favordynmods`` (Linux 6.0+), which operators may enable.
    """

    def apply(self, *, memory_bytes: int, processes: int, cpus: float | None = None) -> None:
        folder = self.folders["cpu"]
        if cpus is not None and (folder / "cpu.max").exists():
            _write(folder / "cpu.max", f"{int(cpus * CPU_PERIOD_US)} {CPU_PERIOD_US}")
        if "memory" in self.folders:
            _write(folder / "memory.max", str(memory_bytes))
            _write(folder / "memory.swap.max", "0")
        if "pids" in self.folders:
            _write(folder / "pids.max", str(processes))

    def cpu_seconds(self) -> float | None:
        usec = _keyed(_read(self.folders["cpu"] / "cpu.stat"), "usage_usec")
        return usec / 1e6 if usec is not None else None

    def usage(self) -> Usage:
        folder = self.folders["cpu"]
        peak = _read(folder / "memory.peak")
        kills = _keyed(_read(folder / "memory.events"), "oom_kill") or 0
        return Usage(
            self.cpu_seconds(), int(peak) if peak and peak.strip().isdigit() else None, kills > 0
        )

    def kill(self) -> None:
        _write(self.folders["cpu"] / "cgroup.kill", "1")  # kernel 5.14+; the loop covers older
        super().kill()


class CgroupHost:
    """The cgroup hierarchy of this host: finds the writable parents and creates run cgroups."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._parents: dict[str, Path] | None = None

    @property
    def version(self) -> int | None:
        """2 for a unified hierarchy at ``root``, 1 for per-controller mounts, else None."""
        if (self.root / "cgroup.controllers").exists():
            return 2
        if any((self.root / c).is_dir() for c in V1_CONTROLLERS):
            return 1
        return None

    def parents(self) -> dict[str, Path]:
        """Controller → writable ``proctor`` parent folder (created once; empty if none)."""
        if self._parents is None:
            self._parents = self._find_parents()
        return self._parents

    def _find_parents(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        if self.version == 2:
            parent = self.root / PARENT
            if _mkdir(parent):
                for controller in V2_CONTROLLERS:
                    _write(self.root / "cgroup.subtree_control", f"+{controller}")
                    _write(parent / "cgroup.subtree_control", f"+{controller}")
                enabled = (_read(parent / "cgroup.subtree_control") or "").split()
                found = {c: parent for c in V2_CONTROLLERS if c in enabled}
                found["cpu"] = parent  # cpu.stat and cgroup.kill exist without the controller
        elif self.version == 1:
            for controller in V1_CONTROLLERS:
                parent = self.root / controller / _own_path(controller).lstrip("/") / PARENT
                if _mkdir(parent):
                    found[controller] = parent
        return found

    def create(
        self, *, memory_bytes: int, processes: int, cpus: float | None = None
    ) -> Cgroup | None:
        """A fresh, uniquely named run cgroup with the limits applied, or None if unavailable."""
        parents = self.parents()
        if not parents:
            return None
        name = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        folders: dict[str, Path] = {}
        for controller, parent in parents.items():
            if controller == "cpu" and cpus is None and self.version == 1:
                continue  # v1's cpu hierarchy is only needed for a quota
            folder = parent / name
            if _mkdir(folder):
                folders[controller] = folder
        if not folders:
            return None
        group: Cgroup = CgroupV2(folders) if self.version == 2 else CgroupV1(folders)
        if self.version == 2 and "cpu" not in folders:
            group.remove()
            return None
        group.apply(memory_bytes=memory_bytes, processes=processes, cpus=cpus)
        return group

    def reconcile(self) -> int:
        """Remove run cgroups left by workers that no longer exist; returns how many."""
        removed = 0
        for parent in dict.fromkeys(self.parents().values()):
            for folder in _children(parent):
                owner = folder.name.partition("-")[0]
                if owner.isdigit() and not pid_alive(int(owner)):
                    _kill_members([folder])
                    _remove(folder)
                    removed += 1
        return removed


def _own_path(controller: str) -> str:
    """The cgroup path of the current process in a v1 controller hierarchy ("/" if unknown)."""
    for line in (_read(Path("/proc/self/cgroup")) or "").splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    return "/"


def _mkdir(folder: Path) -> bool:
    try:
        folder.mkdir(exist_ok=True)
    except OSError:
        return False
    return os.access(folder / "cgroup.procs", os.W_OK)


def _children(parent: Path) -> list[Path]:
    try:
        return [p for p in parent.iterdir() if p.is_dir()]
    except OSError:
        return []
