"""The first link of every launch chain: set the run's rlimits, join its cgroup, exec the rest.

One ``dash`` process does both with builtins (``ulimit``, ``echo 0 > tasks``) and then
``exec``s the next program, so no Python runs between ``fork`` and ``exec`` and no separate
``prlimit`` process is started (each exec costs about a millisecond). It runs as the caller
(root on production workers) before any privilege drop, exactly where ``prlimit`` ran.

``dash`` is required for that path because ``ulimit`` differs between shells: in dash ``-p`` is
the process count and ``-f`` counts 512-byte blocks, while bash uses ``-u`` and 1024-byte blocks.
Where dash is missing, or a limit is not a whole number of dash's units (file size: 512 bytes,
address space: 1024 bytes), the chain falls back to ``/bin/sh`` (join only) + ``prlimit``, so
the limits set are always exactly the ones asked for. ``BwrapSandbox.check`` reads
``/proc/self/limits`` inside the sandbox and refuses to run if they differ.

Limits of one run (soft = hard unless said otherwise): CPU seconds ``cpu + 1`` soft and
``cpu + 2`` hard (SIGXCPU, then SIGKILL; ``cpu`` is ``Limits.cpu_s`` or ``Limits.longest_s``
rounded up),
processes of the slot uid ``Limits.uid_processes`` (else ``processes``) ``+ PROCESS_SLACK``,
file size, open files, core 0, and the address space only when no memory cgroup limits the run.
"""

from __future__ import annotations

import contextlib
import functools
import math
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from proctor.errors import SandboxUnavailableError
from proctor.sandbox.base import Limits
from proctor.sandbox.cgroups import Cgroup, CgroupHost

SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin"
# The launcher chain execs into bwrap, which stays as the one process above the command.
PROCESS_SLACK = 1
DASH_FSIZE_UNIT = 512
DASH_AS_UNIT = 1024

_JOIN_LOOP = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo 0 > "$1" || exit 125; shift; n=$((n-1)); done; '
    'exec "$@"'
)
# $1 cpu soft, $2 cpu hard, $3 processes, $4 file size blocks, $5 open files, $6 address space
# KiB or "-", then the number of cgroup files to join (``Cgroup.join_files``), the files and
# the command. Writing 0 moves the writer itself; the shell is single-threaded.
LIMIT_AND_JOIN = (
    'ulimit -t "$2" && ulimit -S -t "$1" && ulimit -p "$3" && ulimit -f "$4" && '
    'ulimit -n "$5" && ulimit -c 0 || exit 125; '
    'if [ "$6" != - ]; then ulimit -v "$6" || exit 125; fi; shift 6; ' + _JOIN_LOOP
)
JOIN_ONLY = _JOIN_LOOP


@dataclass(frozen=True, slots=True)
class Rlimits:
    """The rlimits of one run, in the kernel's units (seconds, counts, bytes)."""

    cpu_soft_s: int
    cpu_hard_s: int
    processes: int
    file_size_bytes: int
    open_files: int
    address_space_bytes: int | None

    @classmethod
    def of(cls, limits: Limits, *, address_space: bool) -> Rlimits:
        """The rlimits for ``limits``; the address space only when ``address_space``."""
        cpu = math.ceil(limits.cpu_s if limits.cpu_s is not None else limits.longest_s)
        return cls(
            cpu_soft_s=cpu + 1,
            cpu_hard_s=cpu + 2,
            processes=(limits.uid_processes or limits.processes) + PROCESS_SLACK,
            file_size_bytes=limits.file_size_bytes,
            open_files=limits.open_files,
            address_space_bytes=limits.memory_bytes if address_space else None,
        )

    @property
    def fits_dash(self) -> bool:
        """True when dash's ``ulimit`` units express every limit exactly."""
        space = self.address_space_bytes
        return self.file_size_bytes % DASH_FSIZE_UNIT == 0 and (
            space is None or space % DASH_AS_UNIT == 0
        )


@functools.cache
def find_tool(name: str) -> str | None:
    """The absolute path of a system program (cached: looked up once per process)."""
    return shutil.which(name, path=SYSTEM_PATH)


def launcher_prefix(
    limits: Limits,
    join_files: Sequence[Path],
    *,
    address_space: bool,
    dash: str | None,
    prlimit: str | None,
) -> list[str]:
    """The argv prefix that sets the rlimits and joins ``join_files``, then execs the rest.

    Uses one ``dash`` when given and exact, else ``/bin/sh`` (only with cgroup files) followed
    by ``prlimit``; raises SandboxUnavailableError when that fallback is needed but missing.
    """
    rl = Rlimits.of(limits, address_space=address_space)
    files = [str(path) for path in join_files]
    if dash is not None and rl.fits_dash:
        space = rl.address_space_bytes
        values = [
            rl.cpu_soft_s,
            rl.cpu_hard_s,
            rl.processes,
            rl.file_size_bytes // DASH_FSIZE_UNIT,
            rl.open_files,
            "-" if space is None else space // DASH_AS_UNIT,
            len(files),
        ]
        return [dash, "-c", LIMIT_AND_JOIN, "sh", *[str(v) for v in values], *files]
    if prlimit is None:
        raise SandboxUnavailableError(
            "neither dash nor prlimit was found to set the rlimits of a run; install them "
            "(Debian/Ubuntu: apt-get install dash util-linux)"
        )
    join = ["/bin/sh", "-c", JOIN_ONLY, "sh", str(len(files)), *files] if files else []
    return [*join, *prlimit_argv(prlimit, rl)]


def limits_mismatch(proc_limits: str, rl: Rlimits) -> list[str]:
    """The rlimits that ``/proc/<pid>/limits`` text shows differently from ``rl`` (empty: all set).

    The address space is left out: it is set only when no memory cgroup limits the run.
    """
    shown: dict[str, tuple[str, str]] = {}
    for line in proc_limits.splitlines()[1:]:
        fields = line[26:].split()
        if len(fields) >= 2:
            shown[line[:26].strip()] = (fields[0], fields[1])
    wanted = {
        "Max cpu time": (rl.cpu_soft_s, rl.cpu_hard_s),
        "Max processes": (rl.processes, rl.processes),
        "Max file size": (rl.file_size_bytes, rl.file_size_bytes),
        "Max open files": (rl.open_files, rl.open_files),
        "Max core file size": (0, 0),
    }
    return [
        f"{name}: {shown.get(name)} instead of {pair}"
        for name, pair in wanted.items()
        if shown.get(name) != (str(pair[0]), str(pair[1]))
    ]


def prlimit_argv(prlimit: str, rl: Rlimits) -> list[str]:
    """``prlimit`` options setting ``rl`` (the fallback when dash cannot)."""
    argv = [
        prlimit,
        f"--cpu={rl.cpu_soft_s}:{rl.cpu_hard_s}",
        f"--nproc={rl.processes}",
        f"--fsize={rl.file_size_bytes}",
        f"--nofile={rl.open_files}",
        "--core=0",
    ]
    if rl.address_space_bytes is not None:
        argv.append(f"--as={rl.address_space_bytes}")
    return [*argv, "--"]


@contextlib.contextmanager
def run_cgroup(
    host: CgroupHost, limits: Limits, *, enabled: bool, slot: int | None = None
) -> Iterator[Cgroup | None]:
    """A fresh cgroup with ``limits`` for one run, removed (members killed) when it ends.

    None when not ``enabled`` (not root) or when the host has no writable cgroups. With
    ``slot``, the run shares its slot's CPU weight (``CgroupHost.create``).
    """
    cgroup = None
    if enabled:
        cgroup = host.create(
            memory_bytes=limits.memory_bytes,
            processes=limits.processes + PROCESS_SLACK,
            cpus=limits.cpus,
            slot=slot,
        )
    try:
        yield cgroup
    finally:
        if cgroup is not None:
            cgroup.remove()


def limits_prefix(limits: Limits, cgroup: Cgroup | None) -> list[str]:
    """The launcher's first link for a run in ``cgroup``: its rlimits, then joining it.

    Without a cgroup that limits memory, the address-space rlimit stands in for it.
    """
    return launcher_prefix(
        limits,
        cgroup.join_files if cgroup is not None else [],
        address_space=cgroup is None or not cgroup.limits_memory,
        dash=find_tool("dash"),
        prlimit=find_tool("prlimit"),
    )
