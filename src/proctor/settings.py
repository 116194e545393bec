"""The one reader of the environment: everything else receives a ``Settings`` object."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from proctor.errors import UsageError

SandboxBackend = Literal["bwrap", "process"]
SANDBOX_BACKENDS: tuple[SandboxBackend, ...] = get_args(SandboxBackend)


def running_as_root() -> bool:
    """True when this process has the effective uid 0 (asked once, by ``Settings``)."""
    return os.geteuid() == 0


@dataclass(frozen=True, slots=True)
class Settings:
    """Host-level configuration of Proctor.

    ``work_root``: where run folders are created. ``sandbox_backend``: ``bwrap`` (default),
    ``process`` (trusted code only; needs ``allow_unsandboxed``). ``slot_uid_base``: first uid of
    the unprivileged uids given to concurrent sandbox slots when running as root. ``is_root``:
    whether this worker runs as root, which decides slot uids, cgroups and tmpfs workspaces;
    read from the process once, and set explicitly in tests that play the other case.
    ``env_root``: the store of built environments.
    """

    work_root: Path
    sandbox_backend: SandboxBackend = "bwrap"
    allow_unsandboxed: bool = False
    slot_uid_base: int = 61000
    cgroup_root: Path = Path("/sys/fs/cgroup")
    slot_lock_dir: Path | None = None
    is_root: bool = field(default_factory=running_as_root)
    env_root: Path | None = None

    @property
    def environments(self) -> Path:
        """Where built environments are stored (``PROCTOR_ENV_ROOT``)."""
        return self.env_root or default_env_root(os.environ, self.is_root)

    @property
    def slot_locks(self) -> Path:
        """Where sandbox slots are claimed.

        One folder for the whole host, whatever the work root, so two evaluations never run as
        the same slot uid at once.
        """
        return self.slot_lock_dir or default_slot_locks(self.is_root)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read ``PROCTOR_*`` variables; unset ones take the defaults.

        Raises ``UsageError`` for a value that cannot be used, naming the variable.
        """
        env = os.environ if environ is None else environ
        is_root = running_as_root()
        return cls(
            work_root=Path(env.get("PROCTOR_WORK_ROOT", str(default_work_root(env, is_root)))),
            sandbox_backend=sandbox_backend(env.get("PROCTOR_SANDBOX", "bwrap")),
            allow_unsandboxed=env.get("PROCTOR_ALLOW_UNSANDBOXED", "") == "1",
            slot_uid_base=int(env.get("PROCTOR_SLOT_UID_BASE", "61000")),
            cgroup_root=Path(env.get("PROCTOR_CGROUP_ROOT", "/sys/fs/cgroup")),
            slot_lock_dir=Path(env.get("PROCTOR_SLOT_LOCKS", str(default_slot_locks(is_root)))),
            is_root=is_root,
            env_root=Path(env.get("PROCTOR_ENV_ROOT", str(default_env_root(env, is_root)))),
        )


def sandbox_backend(name: str) -> SandboxBackend:
    """``name`` as a backend choice, or a UsageError naming ``PROCTOR_SANDBOX`` and the choices."""
    for choice in SANDBOX_BACKENDS:
        if name == choice:
            return choice
    raise UsageError(
        f"PROCTOR_SANDBOX={name!r} is not a sandbox backend; "
        f"choose one of {', '.join(SANDBOX_BACKENDS)}"
    )


def default_slot_locks(is_root: bool) -> Path:
    """The default slot-lock folder.

    As root, ``/run/lock/proctor`` (host-wide, emptied at boot); else a per-user folder, since
    without root every run uses the caller's own uid anyway.
    """
    if is_root and Path("/run/lock").is_dir():
        return Path("/run/lock/proctor")
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / f"proctor-slots-{os.getuid()}"
    return Path.home() / ".cache" / "proctor" / "slots"


def default_work_root(env: Mapping[str, str], is_root: bool) -> Path:
    """Where run folders go by default.

    As root, ``/var/lib/proctor/runs``: sandbox slots (other uids) must be able to traverse every
    folder above a mount, root's home is private, and a fixed name in a world-writable folder
    (``/var/tmp``) could be planted by another local user. Otherwise the user's cache folder.
    """
    if is_root:
        return Path("/var/lib/proctor/runs")
    return Path(env.get("XDG_CACHE_HOME", str(Path.home() / ".cache"))) / "proctor" / "runs"


def default_env_root(env: Mapping[str, str], is_root: bool) -> Path:
    """Where built environments go by default.

    As root, ``/var/lib/proctor/envs`` (shared by every worker of the host); otherwise the
    user's cache folder.
    """
    if is_root:
        return Path("/var/lib/proctor/envs")
    return Path(env.get("XDG_CACHE_HOME", str(Path.home() / ".cache"))) / "proctor" / "envs"
