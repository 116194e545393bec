"""Where per-run control groups live: finding the hierarchy, creating runs, slot CPU weights.

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

CPU share per evaluation: a run given a slot is placed, in the ``cpu`` controller, below
``proctor/slot-<N>`` (v1: ``cpu.shares`` 1024; v2: ``cpu.weight`` 100, with the run's other
controllers enabled there). A slot is held by one session (one job) at a time on the host, so
every evaluation running at once is one scheduling entity of equal weight, whatever it spawns
(new sessions included: the kernel's autogroup applies only to tasks outside cpu cgroups).
Where the ``cpu`` controller is missing or read-only, runs stay in the worker's cpu group and
fairness rests on autogroup (each run is a session of its own).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from proctor.host import pid_alive
from proctor.sandbox.control_group import (
    Cgroup,
    CgroupV1,
    CgroupV2,
    Usage,
    kill_members,
    read_file,
    remove_group,
    write_file,
)

__all__ = ["Cgroup", "CgroupHost", "CgroupV1", "CgroupV2", "Usage"]

PARENT = "proctor"
V1_CONTROLLERS = ("memory", "pids", "cpuacct", "cpu")
V2_CONTROLLERS = ("memory", "pids", "cpu")
SLOT_PREFIX = "slot-"
V1_SLOT_SHARES = "1024"
V2_SLOT_WEIGHT = "100"


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
                    write_file(self.root / "cgroup.subtree_control", f"+{controller}")
                    write_file(parent / "cgroup.subtree_control", f"+{controller}")
                enabled = (read_file(parent / "cgroup.subtree_control") or "").split()
                write_file(parent / "cpu.weight", str(min(10_000, 100 * _cores())))
                found = {c: parent for c in V2_CONTROLLERS if c in enabled}
                found["cpu"] = parent  # cpu.stat and cgroup.kill exist without the controller
        elif self.version == 1:
            for controller in V1_CONTROLLERS:
                parent = self.root / controller / _own_path(controller).lstrip("/") / PARENT
                if _mkdir(parent):
                    found[controller] = parent
                if controller == "cpu" and controller in found:
                    write_file(parent / "cpu.shares", str(1024 * _cores()))
        return found

    def create(
        self,
        *,
        memory_bytes: int,
        processes: int,
        cpus: float | None = None,
        slot: int | None = None,
    ) -> Cgroup | None:
        """A fresh, uniquely named run cgroup with the limits applied, or None if unavailable.

        With ``slot``, the run's cpu cgroup lies below the slot's (one weight per evaluation).
        """
        parents = self._run_parents(slot)
        if not parents:
            return None
        name = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        folders: dict[str, Path] = {}
        for controller, parent in parents.items():
            if controller == "cpu" and cpus is None and slot is None and self.version == 1:
                continue  # v1's cpu hierarchy: only for a quota or a slot's weight
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

    def _run_parents(self, slot: int | None) -> dict[str, Path]:
        """Controller → parent of a run's folder: the slot's cpu group where one can exist."""
        parents = dict(self.parents())
        if slot is None or not self.cpu_weights:
            return parents
        if self.version == 2:
            group = self._slot_group(parents["cpu"], slot, "cpu.weight", V2_SLOT_WEIGHT)
            return dict.fromkeys(parents, group) if group is not None else parents
        group = self._slot_group(parents["cpu"], slot, "cpu.shares", V1_SLOT_SHARES)
        if group is not None:
            parents["cpu"] = group
        return parents

    @property
    def cpu_weights(self) -> bool:
        """Whether a writable cpu controller can give each slot a weight of its own."""
        cpu = self.parents().get("cpu")
        return cpu is not None and (
            (self.version == 1)
            or "cpu" in (read_file(cpu / "cgroup.subtree_control") or "").split()
        )

    def _slot_group(self, parent: Path, slot: int, knob: str, weight: str) -> Path | None:
        """The slot's cpu cgroup below ``parent`` (created on first use; kept for reuse)."""
        group = parent / f"{SLOT_PREFIX}{slot}"
        if not _mkdir(group) or not write_file(group / knob, weight):
            return None
        if self.version == 2:
            enabled = (read_file(parent / "cgroup.subtree_control") or "").split()
            for controller in enabled:
                write_file(group / "cgroup.subtree_control", f"+{controller}")
        return group

    def reconcile(self, *, also: int | None = None) -> int:
        """Remove run cgroups left by workers that no longer exist; returns how many.

        ``also``: a live process (a stopping worker) whose run cgroups go as well.
        """
        removed = 0
        for parent in dict.fromkeys(self.parents().values()):
            slots = [f for f in _children(parent) if f.name.startswith(SLOT_PREFIX)]
            for folder in [*_children(parent), *[run for s in slots for run in _children(s)]]:
                owner = folder.name.partition("-")[0]
                if owner.isdigit() and (int(owner) == also or not pid_alive(int(owner))):
                    kill_members([folder])
                    remove_group(folder)
                    removed += 1
        return removed


def _cores() -> int:
    """CPUs this worker may use: the weight of all evaluations together, one per core.

    All runs share the ``proctor`` cpu group; weighted like one busy process per core, they
    keep the whole machine's worth against other host processes, as runs did when each was
    an autogroup of its own.
    """
    return len(os.sched_getaffinity(0)) or 1


def _own_path(controller: str) -> str:
    """The cgroup path of the current process in a v1 controller hierarchy ("/" if unknown)."""
    for line in (read_file(Path("/proc/self/cgroup")) or "").splitlines():
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
