"""Facts about this host's processes and mounts, read where the kernel publishes them.

The clean-up code of the sandbox and of environment builds needs them (is a worker still
alive? what is mounted below a folder?); one reader of ``/proc/self/mountinfo`` serves all.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_ESCAPES = (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\"))


def pid_alive(pid: int) -> bool:
    """True if a process ``pid`` exists (even one we may not signal)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_files(name: str) -> Iterator[tuple[int, str]]:
    """``(pid, text of /proc/PID/NAME)`` of every process (those gone meanwhile left out)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / name).read_text()
        except OSError:  # gone meanwhile
            continue
        yield int(entry.name), text


def child_pids(parent: int) -> list[int]:
    """The live processes whose parent is ``parent`` (read from ``/proc/<pid>/stat``)."""
    found = []
    for pid, stat in process_files("stat"):
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 1 and fields[1] == str(parent) and fields[0] != "Z":
            found.append(pid)
    return found


@dataclass(frozen=True, slots=True)
class MountPoint:
    """One mount of this mount namespace: where, of what kind, from which source."""

    point: str
    fstype: str
    source: str


def _unescape(field: str) -> str:
    """A mountinfo path with its octal escapes (space, tab, newline, backslash) undone."""
    for code, char in _ESCAPES:
        field = field.replace(code, char)
    return field


def mounts() -> list[MountPoint]:
    """Every mount of this mount namespace, deepest mount point first."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) > 4 and len(tail) > 1:
            found.append(MountPoint(_unescape(fields[4]), tail[0], tail[1]))
    return sorted(found, key=lambda mount: len(mount.point), reverse=True)


def mounts_below(folder: str) -> list[MountPoint]:
    """The mounts at or below ``folder`` (a resolved path), deepest first."""
    prefix = folder.rstrip("/") + "/"
    return [m for m in mounts() if m.point == folder or m.point.startswith(prefix)]
