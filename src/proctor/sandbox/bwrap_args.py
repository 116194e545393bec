"""The bubblewrap command line of one run: what exists inside the sandbox, and nothing else.

Inside: read-only ``/usr`` (with the ``/bin``, ``/lib``, ``/lib64`` links of a merged-usr
system), a curated read-only ``/etc`` (loader cache, alternatives, Python's config, a synthetic
``passwd``/``group``/``hosts`` naming the sandbox user; never ``shadow``), ``/proc`` of the new pid
namespace, a minimal ``/dev`` with a capped tmpfs ``/dev/shm``, a capped tmpfs ``/tmp``, the
caller's mounts, and a root that is read-only once everything is in place. New user, pid, net,
ipc, uts and cgroup namespaces; nested user namespaces disabled; no capabilities; a new session
(no TIOCSTI into the caller's terminal); killed with its parent; empty environment plus ``env``.

The command runs as pid 1 of its pid namespace (``--as-pid-1``): bubblewrap's own init would
otherwise be left as a zombie of the host's init after every run, counted against the slot
uid's RLIMIT_NPROC until the host reaps it (seconds on some container inits). Consequences:
signals sent from inside to the top process with default action (SIGTERM, SIGINT) are ignored,
orphans inside stay zombies until the run ends, and every limit is enforced from outside
(SIGKILL from the host, OOM killer, RLIMIT_CPU's hard limit). When the top process exits, the
kernel kills everything else in the namespace.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path

from proctor.errors import PlatformError, UsageError
from proctor.sandbox.base import Mount, RunSpec
from proctor.sandbox.proc_views import DataFile, hidden_dirs

SANDBOX_UID = 1000
SANDBOX_GID = 1000
HOSTNAME = "sandbox"
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
ETC_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "localtime",
    "nsswitch.conf",
    "mime.types",
    "python3",
    "python3.11",
    "python3.12",
    "python3.13",
)
RESERVED_TARGETS = ("/proc", "/dev", "/etc")


def synthetic_etc() -> list[DataFile]:
    """``/etc/passwd``, ``group`` and ``hosts`` naming only root, the sandbox user and nobody."""
    user = f"{HOSTNAME}:x:{SANDBOX_UID}:{SANDBOX_GID}:sandbox:/tmp:/bin/sh\n"
    passwd = f"root:x:0:0:root:/root:/bin/sh\n{user}nobody:x:65534:65534:nobody:/:/bin/false\n"
    group = f"root:x:0:\n{HOSTNAME}:x:{SANDBOX_GID}:\nnogroup:x:65534:\n"
    hosts = f"127.0.0.1 localhost {HOSTNAME}\n::1 localhost ip6-localhost\n"
    return [
        DataFile("/etc/passwd", passwd.encode()),
        DataFile("/etc/group", group.encode()),
        DataFile("/etc/hosts", hosts.encode()),
    ]


def check_target(target: str, *, what: str) -> str:
    """A normalised absolute in-sandbox path, or a UsageError naming ``what`` and the fix."""
    if not target.startswith("/"):
        raise UsageError(f"{what} {target!r} must be an absolute path inside the sandbox")
    clean = posixpath.normpath(target)
    if clean == "/" or clean.startswith("//") or ".." in clean.split("/"):
        raise UsageError(f"{what} {target!r} must name a folder below '/', without '..'")
    for reserved in RESERVED_TARGETS:
        if clean == reserved or clean.startswith(reserved + "/"):
            raise UsageError(f"{what} {target!r} would shadow the sandbox's own {reserved}")
    return clean


def check_reachable(mount: Mount, uid: int, gid: int) -> None:
    """Fail early if the slot identity cannot reach ``mount.source`` (bwrap opens it as that uid).

    Approximates the kernel's check with owner/group/other permission bits, which is what
    matters for a uid with no supplementary groups and no capabilities.
    """
    source = Path(mount.source)
    if not source.exists():
        raise UsageError(f"mount source {source} (for {mount.target}) does not exist")
    need = os.R_OK | (os.W_OK if mount.writable else 0)
    chain = [*reversed(source.resolve().parents), source.resolve()]
    for path in chain:
        wanted = need if path == chain[-1] else os.X_OK
        if path == chain[-1] and path.is_dir():
            wanted |= os.X_OK
        if not _allowed(path, uid, gid, wanted):
            fix = "session.give()/session.workspace()" if mount.writable else "chmod o+rx on it"
            raise PlatformError(
                f"mount source {source} is not reachable by the sandbox uid {uid}: {path} "
                f"lacks permission; use {fix} or a folder outside root-only trees such as /root"
            )


def _allowed(path: Path, uid: int, gid: int, wanted: int) -> bool:
    st = path.stat()
    if st.st_uid == uid:
        shift = 6
    elif st.st_gid == gid:
        shift = 3
    else:
        shift = 0
    bits = (st.st_mode >> shift) & 0o7
    return bits & wanted == wanted


def bwrap_args(
    bwrap: str,
    spec: RunSpec,
    *,
    data_fds: Sequence[tuple[int, str]] = (),
    seccomp_fd: int | None = None,
    root_dir: Path | None = None,
) -> list[str]:
    """The full ``bwrap`` argv; ``data_fds`` pairs an open fd with the file it becomes inside.

    ``root_dir``: a root filesystem tree whose ``usr``, ``etc`` and ``opt`` are shown instead
    of the host's (None: the host's ``/usr`` and a curated part of its ``/etc``). A spec with
    a ``root_tree`` gets :func:`tree_args` instead.
    """
    if spec.root_tree is not None:
        return tree_args(bwrap, spec, data_fds=data_fds, seccomp_fd=seccomp_fd)
    limits = spec.limits
    args = [bwrap, *ISOLATION_ARGS, *root_args(root_dir, spec.mounts), *_system_args(data_fds)]
    args += ["--size", str(limits.shm_bytes), "--perms", "1777", "--tmpfs", "/dev/shm"]
    args += ["--size", str(limits.tmp_bytes), "--perms", "1777", "--tmpfs", "/tmp"]
    for mount in spec.mounts:
        target = check_target(mount.target, what="mount target")
        kind = "--bind" if mount.writable else "--ro-bind"
        args += [kind, str(mount.source), target]
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    args += ["--chdir", spec.cwd, "--clearenv"]
    for key, value in sandbox_env(spec.env).items():
        args += ["--setenv", key, value]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return [*args, "--", *spec.argv]


def tree_args(
    bwrap: str,
    spec: RunSpec,
    *,
    data_fds: Sequence[tuple[int, str]] = (),
    seccomp_fd: int | None = None,
) -> list[str]:
    """The ``bwrap`` argv of a run on a writable ``spec.root_tree`` (an image build step).

    The same namespaces, seccomp filter, ``/proc`` views and limits as any run, but uid 0
    inside (the slot uid outside, no capabilities), the tree bound writable at ``/`` with its
    own ``/etc`` and ``/tmp``. The synthetic ``/etc`` files are not bound: they would leave
    mount points in the tree the build snapshots.
    """
    assert spec.root_tree is not None  # noqa: S101 - the caller's check
    args = [bwrap, *_isolation(uid=0, gid=0), "--bind", str(spec.root_tree), "/"]
    late = [pair for pair in data_fds if pair[1].startswith("/proc/")]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += [arg for fd, target in late for arg in ("--ro-bind-data", str(fd), target)]
    for folder in hidden_dirs():
        args += ["--size", "4096", "--tmpfs", folder]
    args += ["--size", str(spec.limits.shm_bytes), "--perms", "1777", "--tmpfs", "/dev/shm"]
    for mount in spec.mounts:
        target = check_target(mount.target, what="mount target")
        args += ["--bind" if mount.writable else "--ro-bind", str(mount.source), target]
    args += ["--remount-ro", "/dev", "--chdir", spec.cwd, "--clearenv"]
    for key, value in sandbox_env(spec.env).items():
        args += ["--setenv", key, value]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return [*args, "--", *spec.argv]


def _isolation(*, uid: int, gid: int) -> list[str]:
    """``ISOLATION_ARGS`` with another identity inside the user namespace."""
    args = list(ISOLATION_ARGS)
    args[args.index("--uid") + 1] = str(uid)
    args[args.index("--gid") + 1] = str(gid)
    return args


ISOLATION_ARGS = (
    "--unshare-all",
    "--unshare-user",
    "--uid",
    str(SANDBOX_UID),
    "--gid",
    str(SANDBOX_GID),
    "--disable-userns",
    "--as-pid-1",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--hostname",
    HOSTNAME,
)
"""New namespaces of every kind, the sandbox user, no capabilities, a session of its own."""


def _system_args(data_fds: Sequence[tuple[int, str]]) -> list[str]:
    """The synthetic files, a new ``/proc`` and ``/dev``, and the host-wide ``/proc`` hidden.

    Files for ``/proc`` are bound once the new ``/proc`` is mounted, the others before.
    """
    early = [pair for pair in data_fds if not pair[1].startswith("/proc/")]
    late = [pair for pair in data_fds if pair[1].startswith("/proc/")]
    args = [arg for fd, target in early for arg in ("--ro-bind-data", str(fd), target)]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += [arg for fd, target in late for arg in ("--ro-bind-data", str(fd), target)]
    for folder in hidden_dirs():
        args += ["--size", "4096", "--tmpfs", folder]
    return args


def root_args(root_dir: Path | None, mounts: Sequence[Mount] = ()) -> list[str]:
    """What the sandbox sees as ``/usr``, ``/bin``… and ``/etc``: the host's or ``root_dir``'s.

    With an environment, its whole ``/etc`` is shown (the sandbox's own ``passwd``, ``group``
    and ``hosts`` are bound over it), and so is every other top-level folder and link of its
    tree (an entry image's ``/app``, a non-merged ``/bin``), except the places a system keeps
    for itself (``/proc``, ``/var``, ``/home``, ``/root``…: see ``NOT_SHOWN``) and those
    holding one of the run's ``mounts``. Links are recreated as they are: they resolve inside
    the sandbox, never on the host. Nothing comes from the host.
    """
    if root_dir is None:
        args = ["--ro-bind", "/usr", "/usr"]
        for link in ("bin", "lib", "lib64", "sbin"):
            if Path(f"/usr/{link}").is_dir():
                args += ["--symlink", f"usr/{link}", f"/{link}"]
        for name in ETC_FILES:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        return args
    return _environment_root_args(root_dir, mounts)


def _environment_root_args(root_dir: Path, mounts: Sequence[Mount]) -> list[str]:
    """``root_args`` for an environment's tree (its folders, never a host path)."""
    for name in ("usr", "etc"):
        if not _real_folder(root_dir / name):
            raise PlatformError(f"{root_dir / name} is not a folder: not a root filesystem")
    args = ["--ro-bind", str(root_dir / "usr"), "/usr"]
    args += ["--ro-bind", str(root_dir / "etc"), "/etc"]
    if _real_folder(root_dir / "opt"):  # bwrap resolves a bind's source on the host
        args += ["--ro-bind", str(root_dir / "opt"), "/opt"]
    taken = {target.strip("/").split("/")[0] for target in (m.target for m in mounts)}
    for entry in sorted(os.scandir(root_dir), key=lambda e: e.name):
        if entry.name in _ROOT_SHOWN or entry.name in NOT_SHOWN or entry.name in taken:
            continue
        if entry.is_symlink():
            args += ["--symlink", os.readlink(entry.path), f"/{entry.name}"]
        elif entry.is_dir(follow_symlinks=False):
            args += ["--ro-bind", entry.path, f"/{entry.name}"]
    return args


def _real_folder(path: Path) -> bool:
    """True for a folder that is not a link (a link would be resolved on the host)."""
    return path.is_dir() and not path.is_symlink()


_ROOT_SHOWN = frozenset({"usr", "etc", "opt"})
NOT_SHOWN = frozenset({
    "proc", "dev", "sys", "tmp", "run", "var", "home", "root", "boot", "mnt", "media", "srv",
    "lost+found",
})  # fmt: skip
"""Top-level folders of a root never shown: the sandbox makes its own, or a system's state."""


def host_paths_shown(root_dir: Path | None) -> list[Path]:
    """Host folders and files every run sees through its root (before any caller mount).

    Hidden data must never lie below one of them, whatever the install layout (a challenge
    installed under ``/usr/local`` is visible to every entry on the host's root).
    """
    if root_dir is not None:
        return [root_dir.resolve()]
    shown = [Path("/usr").resolve()]
    shown += [Path(f"/etc/{name}") for name in ETC_FILES if Path(f"/etc/{name}").exists()]
    return shown


def sandbox_env(env: Mapping[str, str]) -> dict[str, str]:
    """The complete environment inside: PATH, HOME, TMPDIR defaults overridden by ``env``."""
    for key in env:
        if not key or "=" in key or "\0" in key:
            raise UsageError(f"environment variable name {key!r} is invalid")
    return {"PATH": DEFAULT_PATH, "HOME": "/tmp", "TMPDIR": "/tmp", **env}
