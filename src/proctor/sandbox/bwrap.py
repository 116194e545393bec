"""The bubblewrap backend: untrusted code in fresh namespaces, under an unprivileged slot uid.

As root, each run drops to uid/gid ``settings.slot_uid_base + slot`` with ``setpriv`` before
bubblewrap starts (RLIMIT_NPROC is not enforced for root, and a root-owned sandbox could touch
root-owned host files through any mistake in the mounts). Not as root, bubblewrap runs as the
caller, mount sources must be readable by the caller, cgroups are usually not writable (so the
address-space rlimit stands in for the memory limit) and workspaces are not size-capped.

Fail closed: the first ``run`` (or ``check``) executes a trivial command through the full chain;
if bubblewrap or user namespaces do not work, ``SandboxUnavailableError`` says how to fix the
host, and no run happens.

Thread safety: ``run`` may be called concurrently from long-lived worker threads; each call
waits for its own child. A slot is one uid, held by one session at a time on a host, across all
worker processes (``Sandbox.session`` claims it); the runs of that session share the uid
(RLIMIT_NPROC and cgroup-free kills are per uid).

Mount sources are opened by the slot uid: every folder above them must be traversable by
"other" (not below ``/root`` or pytest's 0700 temporary folders), and writable mounts must
belong to the slot (``workspace`` and ``give_to_slot`` do that). ``run`` checks this first and
names the folder that blocks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from proctor.errors import SandboxUnavailableError, UsageError
from proctor.sandbox.base import Limits, Mount, Outcome, RunSpec, plain_workspace
from proctor.sandbox.bwrap_args import (
    bwrap_args,
    check_reachable,
    check_target,
    synthetic_etc,
)
from proctor.sandbox.case_pool import CasePool
from proctor.sandbox.cgroups import Cgroup, CgroupHost
from proctor.sandbox.launch import (
    Rlimits,
    find_tool,
    limits_mismatch,
    limits_prefix,
    run_cgroup,
)
from proctor.sandbox.proc_views import synthetic_proc
from proctor.sandbox.rootfs import AttachedRoot, RootFilesystem, attach_root, release_stale_roots
from proctor.sandbox.runs import RunGroup
from proctor.sandbox.seccomp import denylist_program
from proctor.sandbox.session import SessionSandbox
from proctor.sandbox.slots import claim_slot
from proctor.sandbox.supervise import ClockPipe, supervise
from proctor.sandbox.views import MountViews, PrivateViews
from proctor.sandbox.workspace import give_to_uid, release_stale, tmpfs_workspace
from proctor.settings import Settings

# RLIMIT_NPROC counts every process of the uid: leave room for a busy slot 0 elsewhere.
PROBE_LIMITS = Limits(wall_s=10.0, memory_bytes=256 * 1024 * 1024, processes=65536)
HOST_FIXES = (
    "install bubblewrap and util-linux (Debian/Ubuntu: apt-get install bubblewrap util-linux), "
    "allow unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1 on "
    "Debian; sysctl -w user.max_user_namespaces=15000; on Ubuntu 24.04+ "
    "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0), or in a container run it with "
    "--security-opt seccomp=unconfined --security-opt apparmor=unconfined; for trusted code "
    "only, set PROCTOR_SANDBOX=process and PROCTOR_ALLOW_UNSANDBOXED=1"
)


def _tool(name: str) -> str:
    path = find_tool(name)
    if path is None:
        raise SandboxUnavailableError(f"`{name}` was not found on this host; {HOST_FIXES}")
    return path


class BwrapSandbox(SessionSandbox):
    """Runs commands under bubblewrap with cgroup, rlimit, seccomp and wall-clock limits.

    ``bwrap`` overrides the bubblewrap executable (default: found on the system PATH).
    """

    name = "bwrap"

    def __init__(self, settings: Settings, *, bwrap: str | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.bwrap = bwrap
        self.cgroups = CgroupHost(settings.cgroup_root)
        self._lock = threading.Lock()
        self._ready = False
        self._seccomp = denylist_program()

    @property
    def is_root(self) -> bool:
        """Whether runs drop to slot uids and get cgroups and tmpfs workspaces (``Settings``)."""
        return self.settings.is_root

    def slot_ids(self, slot: int) -> tuple[int, int]:
        """The host uid and gid runs of ``slot`` get (the caller's own when not root)."""
        if isinstance(slot, bool) or not isinstance(slot, int) or slot < 0:
            raise UsageError(f"slot must be a non-negative integer, got {slot!r}")
        if not self.is_root:
            return os.getuid(), os.getgid()
        uid = self.settings.slot_uid_base + slot
        return uid, uid

    def check(self) -> None:
        """Probe the full launch chain once; raise SandboxUnavailableError if it fails."""
        with self._lock:
            if self._ready:
                return
            if self.bwrap is not None and not os.access(self.bwrap, os.X_OK):
                raise SandboxUnavailableError(f"{self.bwrap} is not executable; {HOST_FIXES}")
            outcome = self._launch(
                RunSpec(["/bin/cat", "/proc/self/limits"], limits=PROBE_LIMITS),
                slot=0,
                runs=RunGroup(),  # the probe belongs to no session: nothing cancels it
            )
            if not outcome.succeeded:
                detail = (outcome.stderr.strip() or outcome.describe())[-600:]
                raise SandboxUnavailableError(
                    f"bubblewrap cannot start a sandbox here ({detail}); {HOST_FIXES}"
                )
            wrong = limits_mismatch(outcome.stdout, Rlimits.of(PROBE_LIMITS, address_space=False))
            if wrong:
                raise SandboxUnavailableError(
                    f"the rlimits inside the sandbox are not the ones set ({'; '.join(wrong)}); "
                    "check that `dash` is Debian's dash and util-linux's prlimit works"
                )
            self.reconcile()
            self._ready = True

    def reconcile(self, *, also: int | None = None) -> None:
        """Remove what crashed workers left: run cgroups, mounts, loop devices.

        ``also``: a live process (a stopping worker) whose leftovers go as well.
        """
        self.cgroups.reconcile(also=also)
        if self.is_root and self.settings.work_root.is_dir():
            release_stale_roots(self.settings.work_root / "roots", also=also)
            release_stale(self.settings.work_root, also=also)

    def release_own(self) -> None:
        """Kill this process's runs, then release its mounts, loop devices and cgroups."""
        self.cancel_all()
        self.reconcile(also=os.getpid())

    def attach_root(
        self, root: RootFilesystem, slot: int
    ) -> contextlib.AbstractContextManager[AttachedRoot]:
        """As root, mount ``root``'s image for this session alone; else bind its tree."""
        return attach_root(
            root, is_root=self.is_root, under=self.settings.work_root / "roots", tag=str(slot)
        )

    @contextlib.contextmanager
    def mount_views(self, slot: int) -> Iterator[MountViews]:
        """As root, read-only mounts from private images of this session (``views``)."""
        if not self.is_root:
            yield MountViews()
            return
        uid, gid = self.slot_ids(slot)
        with contextlib.ExitStack() as stack:
            under = self.settings.work_root / "roots"
            yield PrivateViews(stack, under, str(slot), lambda m: check_reachable(m, uid, gid))

    def hold_slot(self) -> contextlib.AbstractContextManager[int]:
        """A free slot of this host (a lock in ``settings.slot_locks``)."""
        if not self.is_root:
            return claim_slot(self.settings.slot_locks)
        return claim_slot(self.settings.slot_locks, uid_of=lambda slot: self.slot_ids(slot)[0])

    def run_in_group(
        self, runs: RunGroup, spec: RunSpec, *, slot: int, root_dir: Path | None = None
    ) -> Outcome:
        """Run ``spec`` in a fresh sandbox of ``slot``, as a member of ``runs``, and wait."""
        if not spec.argv:
            raise UsageError("argv must name a command to run")
        uid, gid = self.slot_ids(slot)
        for mount in spec.mounts:
            check_reachable(mount, uid, gid)
        if spec.root_tree is not None:
            check_reachable(Mount(spec.root_tree, "/", writable=True), uid, gid)
        if spec.cwd != "/":
            spec = dataclasses.replace(spec, cwd=check_target(spec.cwd, what="cwd"))
        self.check()
        return self._launch(spec, slot=slot, runs=runs, root_dir=root_dir)

    def _launch(
        self,
        spec: RunSpec,
        *,
        slot: int,
        runs: RunGroup,
        root_dir: Path | None = None,
        interactive: bool = False,
    ) -> Outcome:
        fds: list[int] = []
        limits = spec.limits
        with contextlib.ExitStack() as stack:
            cgroup = stack.enter_context(
                run_cgroup(self.cgroups, limits, enabled=self.is_root, slot=slot)
            )
            clock = stack.enter_context(ClockPipe.open(limits))
            stack.callback(_close_all, fds)
            if clock is not None:
                spec = dataclasses.replace(spec, env={**spec.env, **clock.env()})
            launcher = self.launcher(spec, slot=slot, root_dir=root_dir, cgroup=cgroup, fds=fds)
            if interactive:
                return _attended(launcher, fds)
            passed = [*fds, clock.write_fd] if clock is not None else fds
            return supervise(
                launcher, limits=limits, cgroup=cgroup, pass_fds=passed, runs=runs, clock=clock
            )

    def launcher(
        self,
        spec: RunSpec,
        *,
        slot: int,
        root_dir: Path | None,
        cgroup: Cgroup | None,
        fds: list[int],
    ) -> list[str]:
        """The whole launch chain of one sandbox; the descriptors it needs are added to ``fds``.

        The caller passes ``fds`` to the launcher and closes them once it has started.
        """
        synthetic = [*synthetic_etc(), *synthetic_proc(spec.limits)]
        data_fds = [(_memfd(f.content, fds), f.target) for f in synthetic]
        seccomp_fd = _memfd(self._seccomp, fds) if self._seccomp else None
        inner = bwrap_args(
            self.bwrap or _tool("bwrap"),
            spec,
            data_fds=data_fds,
            seccomp_fd=seccomp_fd,
            root_dir=root_dir,
        )
        return [*limits_prefix(spec.limits, cgroup), *self._drop_privileges(slot), *inner]

    def case_pool(self, slot: int, runs: RunGroup, root_dir: Path | None) -> CasePool | None:
        """Case servers for a session of ``slot`` (root with cgroups only, else None)."""
        if not self.is_root or not self.cgroups.parents():
            return None
        python = (root_dir or Path("/")) / "usr" / "bin" / "python3"
        if not python.exists():
            return None
        self.check()
        return CasePool(self, slot, runs, root_dir)

    def run_interactive(self, spec: RunSpec, *, slot: int, root_dir: Path | None = None) -> Outcome:
        """Run ``spec`` with this terminal as its stdin/stdout/stderr (``proctor env shell``)."""
        uid, gid = self.slot_ids(slot)
        for mount in spec.mounts:
            check_reachable(mount, uid, gid)
        self.check()
        return self._launch(spec, slot=slot, runs=RunGroup(), root_dir=root_dir, interactive=True)

    def _drop_privileges(self, slot: int) -> list[str]:
        """``setpriv`` to the slot uid (root only).

        Not ``Popen(user=…, group=…, extra_groups=[])``: CPython then forks instead of using
        ``vfork``, and a fork costs time in proportion to the worker's memory (measured here:
        +7 ms at 300 MB, +36 ms at 1.5 GB) while ``setpriv`` costs ~1.5 ms flat.
        """
        if not self.is_root:
            return []
        uid, gid = self.slot_ids(slot)
        # --pdeathsig: if the worker dies while bwrap is still setting up (before bwrap's own
        # --die-with-parent is in force), the kernel kills bwrap too.
        return [
            _tool("setpriv"),
            f"--reuid={uid}",
            f"--regid={gid}",
            "--clear-groups",
            "--pdeathsig=KILL",
            "--",
        ]

    def workspace(
        self, path: Path, *, size_bytes: int, slot: int
    ) -> contextlib.AbstractContextManager[Path]:
        """A tmpfs of ``size_bytes`` owned by the slot uid (root), else an uncapped folder."""
        uid, gid = self.slot_ids(slot)
        if not self.is_root:
            return plain_workspace(path)
        return tmpfs_workspace(path, size_bytes=size_bytes, uid=uid, gid=gid)

    def give_to_slot(self, path: Path, slot: int) -> None:
        """Re-own ``path`` recursively to the slot uid (root only; links never followed)."""
        uid, gid = self.slot_ids(slot)
        if self.is_root:
            give_to_uid(path, uid, gid)


def _memfd(content: bytes, opened: list[int]) -> int:
    """An anonymous in-memory file holding ``content``, positioned at its start."""
    fd = os.memfd_create("proctor")  # close-on-exec; pass_fds hands it on
    opened.append(fd)
    os.write(fd, content)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _attended(launcher: list[str], fds: list[int]) -> Outcome:
    """Run the launcher attached to this terminal and wait (an interactive shell)."""
    started = time.monotonic()
    done = subprocess.run(launcher, pass_fds=tuple(fds), check=False, env={})  # noqa: S603
    status = done.returncode
    if status < 0:
        return Outcome(exit_status=None, signal=-status, wall_s=time.monotonic() - started)
    return Outcome(exit_status=status, wall_s=time.monotonic() - started)


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)
