"""The layers of a built image: what a build changed in a tree, and the OCI archive of it all.

``diff_layer`` compares a build's tree with the base tree it started from and writes the
changes as one uncompressed OCI layer: new and changed entries, ``.wh.NAME`` whiteouts for
removed ones. The tree is untrusted (a build's ``RUN`` steps wrote it): it is walked folder by
folder without following links, only folders, regular files and symbolic links are kept,
owners become 0 and setuid/setgid bits are dropped. ``write_oci_archive`` packs layers and a
config into an OCI image archive (``oci-layout``, ``index.json``, ``blobs/sha256``), which
``podman load`` and ``skopeo`` read as ``oci-archive:``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import tarfile
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from proctor.environments.digests import HashingWriter

MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar"
WHITEOUT = ".wh."
PRIVILEGE_BITS = stat.S_ISUID | stat.S_ISGID
BLOCK = 4096


@dataclass(frozen=True, slots=True)
class LayerSummary:
    """A written layer: its sha256 (its ``diff_id``), bytes, entries and whiteouts."""

    digest: str
    size: int
    entries: int
    whiteouts: int
    skipped: tuple[str, ...]
    """Paths left out (FIFOs, sockets, device nodes), for the build log."""


def tree_bytes(root: Path) -> int:
    """What the tree at ``root`` takes on a tmpfs (file sizes rounded up to pages, folders)."""
    total = 0
    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                total += (
                    BLOCK + (-(-info.st_size // BLOCK)) * BLOCK
                    if entry.is_file(follow_symlinks=False)
                    else BLOCK
                )
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
    return total


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "link"
    return "other"


def _same(base: os.stat_result, tree: os.stat_result, base_path: Path, tree_path: Path) -> bool:
    """Whether an entry is unchanged (kind, mode without setuid bits, size, time, target)."""
    kind = _kind(tree.st_mode)
    if kind != _kind(base.st_mode):
        return False
    if kind == "link":
        return os.readlink(base_path) == os.readlink(tree_path)
    if stat.S_IMODE(base.st_mode) & ~PRIVILEGE_BITS != stat.S_IMODE(tree.st_mode) & ~PRIVILEGE_BITS:
        return False
    if kind == "file":
        return base.st_size == tree.st_size and base.st_mtime_ns == tree.st_mtime_ns
    return True


def _listing(folder: Path) -> dict[str, os.stat_result]:
    try:
        with os.scandir(folder) as entries:
            return {entry.name: entry.stat(follow_symlinks=False) for entry in entries}
    except (FileNotFoundError, NotADirectoryError):
        return {}


def _all_below(tree: Path, rel: str) -> Iterator[str]:
    """``rel`` and everything below it in ``tree``, sorted, folders before their contents."""
    yield rel
    path = tree / rel
    if stat.S_ISDIR(os.lstat(path).st_mode):
        for name in sorted(_listing(path)):
            yield from _all_below(tree, f"{rel}/{name}")


def changes(base: Path, tree: Path, *, skip: Collection[str] = ()) -> list[tuple[str, bool]]:
    """(relative path, is_whiteout) of every change from ``base`` to ``tree``, in tar order.

    ``skip``: top-level names never compared (the build's own mount points).
    """
    return _changes(base, tree, "", set(skip))


def _changes(base: Path, tree: Path, rel: str, skip: set[str]) -> list[tuple[str, bool]]:
    found: list[tuple[str, bool]] = []
    here_tree = _listing(tree / rel) if rel else _listing(tree)
    base_folder = base / rel if rel else base
    here_base = _listing(base_folder) if _is_dir(base_folder) else {}
    prefix = f"{rel}/" if rel else ""
    for name in sorted(here_base.keys() - here_tree.keys()):
        if not (not rel and name in skip):
            found.append((f"{prefix}{WHITEOUT}{name}", True))
    for name in sorted(here_tree):
        if not rel and name in skip:
            continue
        path = f"{prefix}{name}"
        now, before = here_tree[name], here_base.get(name)
        if before is not None and _same(before, now, base / path, tree / path):
            if stat.S_ISDIR(now.st_mode):
                below = _changes(base, tree, path, skip)
                if below:
                    found += [(path, False), *below]
            continue
        if before is not None and _kind(before.st_mode) != _kind(now.st_mode):
            found.append((f"{prefix}{WHITEOUT}{name}", True))
        if before is not None and stat.S_ISDIR(now.st_mode):
            found += [(path, False), *_changes(base, tree, path, skip)]  # only the mode changed
        else:
            found += [(item, False) for item in _all_below(tree, path)]
    return found


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


class LayerTooLargeError(ValueError):
    """The changes' files come to more bytes than the layer may hold (sparse files count whole)."""


def diff_layer(
    base: Path,
    tree: Path,
    sink: IO[bytes],
    *,
    skip: Collection[str] = (),
    max_bytes: int | None = None,
) -> LayerSummary:
    """Write the changes from ``base`` to ``tree`` as an uncompressed layer into ``sink``.

    ``max_bytes``: the most the changed files may hold together, counted before anything is
    written at their apparent sizes (a sparse file, or a file linked twice, counts whole each
    time, as the layer would store it); past it, ``LayerTooLargeError``.
    """
    found = changes(base, tree, skip=skip)
    if max_bytes is not None:
        total = sum(_apparent(tree / rel) for rel, is_whiteout in found if not is_whiteout)
        if total > max_bytes:
            raise LayerTooLargeError(
                f"the image's new files come to {total} bytes, over the cap of {max_bytes}"
            )
    stream = HashingWriter(sink)
    entries = whiteouts = 0
    skipped: list[str] = []
    with tarfile.open(fileobj=stream, mode="w|", format=tarfile.PAX_FORMAT) as tar:  # type: ignore[call-overload]
        for rel, is_whiteout in found:
            if is_whiteout:
                member = tarfile.TarInfo(rel)
                member.mode = 0o644
                tar.addfile(member)
                whiteouts += 1
                continue
            if not _add(tar, tree / rel, rel):
                skipped.append(rel)
                continue
            entries += 1
    return LayerSummary(stream.sha256.hexdigest(), stream.size, entries, whiteouts, tuple(skipped))


def _apparent(path: Path) -> int:
    info = os.lstat(path)
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _add(tar: tarfile.TarFile, path: Path, rel: str) -> bool:
    """Add one entry of the untrusted tree (never through a link); False if left out."""
    info = os.lstat(path)
    member = tarfile.TarInfo(rel)
    member.mode = stat.S_IMODE(info.st_mode) & ~PRIVILEGE_BITS
    member.uid = member.gid = 0
    member.uname = member.gname = "root"
    member.mtime = int(info.st_mtime)
    if stat.S_ISDIR(info.st_mode):
        member.type = tarfile.DIRTYPE
        tar.addfile(member)
    elif stat.S_ISLNK(info.st_mode):
        member.type, member.linkname = tarfile.SYMTYPE, os.readlink(path)
        tar.addfile(member)
    elif stat.S_ISREG(info.st_mode):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            opened = os.fstat(handle.fileno())
            if not stat.S_ISREG(opened.st_mode):
                return False
            member.size = opened.st_size
            tar.addfile(member, handle)
    else:
        return False
    return True


def _add_bytes(out: tarfile.TarFile, name: str, data: bytes) -> None:
    member = tarfile.TarInfo(name)
    member.size = len(data)
    member.mode = 0o644
    out.addfile(member, io.BytesIO(data))


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Layer:
    """A layer file (an uncompressed tar) and its sha256, which is also its ``diff_id``."""

    path: Path
    digest: str
    created_by: str


def write_oci_archive(
    archive: Path, layers: Sequence[Layer], config: Mapping[str, Any], *, ref: str
) -> str:
    """Write an OCI image archive of ``layers`` and ``config``; returns the manifest digest.

    ``config``: the image's run settings (``Env``, ``WorkingDir``, ``User``, ``Cmd``,
    ``Entrypoint``, ``Labels``); ``ref`` names the image in the index.
    """
    config_bytes = json.dumps({
        "architecture": "amd64",
        "os": "linux",
        "config": dict(config),
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{layer.digest}" for layer in layers]},
        "history": [{"created_by": layer.created_by} for layer in layers],
    }, sort_keys=True).encode()  # fmt: skip
    config_digest = hashlib.sha256(config_bytes).hexdigest()
    manifest_bytes = json.dumps({
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "config": {"mediaType": CONFIG_TYPE, "digest": f"sha256:{config_digest}",
                   "size": len(config_bytes)},
        "layers": [{"mediaType": LAYER_TYPE, "digest": f"sha256:{layer.digest}",
                    "size": layer.path.stat().st_size} for layer in layers],
    }, sort_keys=True).encode()  # fmt: skip
    manifest_digest = hashlib.sha256(manifest_bytes).hexdigest()
    index = json.dumps({
        "schemaVersion": 2,
        "manifests": [{"mediaType": MANIFEST_TYPE, "digest": f"sha256:{manifest_digest}",
                       "size": len(manifest_bytes),
                       "annotations": {"org.opencontainers.image.ref.name": ref}}],
    }, sort_keys=True).encode()  # fmt: skip
    partial = archive.with_name(archive.name + ".partial")
    with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as out:
        _add_bytes(out, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        _add_bytes(out, "index.json", index)
        _add_bytes(out, f"blobs/sha256/{config_digest}", config_bytes)
        _add_bytes(out, f"blobs/sha256/{manifest_digest}", manifest_bytes)
        written: set[str] = set()
        for layer in layers:
            if layer.digest not in written:
                out.add(layer.path, arcname=f"blobs/sha256/{layer.digest}")
                written.add(layer.digest)
    partial.replace(archive)
    return f"sha256:{manifest_digest}"
