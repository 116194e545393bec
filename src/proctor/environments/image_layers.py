"""Applying an entry image's layers to a root folder, as untrusted input.

Each layer is a tar stream (plain or gzip), read forward once. Every member is checked before
anything is written for it: a safe name (no ``..``), a size within what is left of the image's
byte budget, a count within its file budget, and a compression ratio no bomb reaches. Then:

- whiteouts are applied (``.wh.NAME`` removes ``NAME`` of lower layers, ``.wh..wh..opq``
  empties its folder of lower layers' files; a character device 0:0 is a whiteout too);
- parent folders are resolved inside the root: a link met on the way is followed as the
  image's own root would see it, never to the host (``..`` stops at the root);
- regular files are created anew (never written through an existing file or link), with mode
  0o755 when any execute bit is set, else 0o644: no setuid, setgid or sticky bit survives;
- symbolic links are created as they are (they resolve inside the sandbox, never on the host);
- hard links must name a regular file already in the image (below the root);
- device nodes and FIFOs are refused; extended attributes (file capabilities) are never set.

The uncompressed bytes of each layer are hashed as they pass, so the caller can check the
config's ``diff_ids``. A refusal is an ``EntryImageError``, the entry's failure.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, cast

from proctor.entries import fsafe
from proctor.entries.limits import MiB, human_bytes
from proctor.entries.names import member_parts
from proctor.entries.tarsource import GuardedTarInfo, special_member
from proctor.errors import ArchiveError, EntryImageError, PlatformError

WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"
MAX_LINK_HOPS = 40
MAX_LINK_TARGET = 4096
RATIO_FLOOR_BYTES = 64 * MiB
"""A layer's ratio is checked once it expands past this many bytes (small layers compress well)."""

_GZIP = b"\x1f\x8b"
_ZSTD = b"\x28\xb5\x2f\xfd"
_CHUNK = 1 * MiB


@dataclass
class LayerBudget:
    """What all layers of one image may still write: bytes of file data and members.

    ``max_ratio`` caps a layer's uncompressed size over its compressed size.
    """

    max_bytes: int
    max_files: int
    max_ratio: float = 200.0
    written: int = field(default=0, init=False)
    members: int = field(default=0, init=False)


class _Counted(io.RawIOBase):
    """A readable stream that hashes and counts what passes, and stops a decompression bomb."""

    def __init__(self, inner: IO[bytes], packed: int, budget: LayerBudget, label: str) -> None:
        self.inner = inner
        self.packed = max(packed, 1)
        self.budget = budget
        self.label = label
        self.sha256 = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.inner.read(len(buffer))
        self.sha256.update(data)
        self.size += len(data)
        if self.size > RATIO_FLOOR_BYTES and self.size > self.budget.max_ratio * self.packed:
            raise EntryImageError(
                f"{self.label} expands from {human_bytes(self.packed)} to more than "
                f"{self.budget.max_ratio:g} times that: this looks like a decompression bomb; "
                "save the image with ordinary layers"
            )
        if self.size > 2 * self.budget.max_bytes + 64 * MiB:
            raise EntryImageError(
                f"{self.label} is larger than the image's {human_bytes(self.budget.max_bytes)} "
                "limit: make the image smaller"
            )
        buffer[: len(data)] = data
        return len(data)


def apply_layer(root_fd: int, blob: IO[bytes], packed: int, budget: LayerBudget, label: str) -> str:
    """Apply one layer (``blob``, ``packed`` bytes, plain or gzip tar) below ``root_fd``.

    Returns the sha256 (hex) of the uncompressed layer, to be checked against its
    ``diff_id``. ``label`` names the layer in messages (``layer 2 of image.tar``).
    """
    head = blob.read(4)
    raw = cast(IO[bytes], _Prefixed(head, blob))
    if head[:4] == _ZSTD:
        raise EntryImageError(
            f"{label} is compressed with zstd, which Proctor does not read: save the image "
            "with gzip or uncompressed layers (docker save, podman save --format docker-archive)"
        )
    stream = cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb")) if head[:2] == _GZIP else raw
    counted = _Counted(stream, packed, budget, label)
    reader = cast(IO[bytes], io.BufferedReader(counted, _CHUNK))
    applier = _Applier(root_fd, budget, label, counted)
    try:
        with tarfile.open(fileobj=reader, mode="r|", tarinfo=GuardedTarInfo) as layer:
            while (info := layer.next()) is not None:
                applier.apply(info, layer)
        while reader.read(_CHUNK):  # the end-of-archive blocks count in the diff_id
            pass
    except EntryImageError:
        raise
    except ArchiveError as err:
        raise EntryImageError(f"{label}: {err}") from err
    except (tarfile.TarError, EOFError, gzip.BadGzipFile, zlib_error()) as err:
        raise EntryImageError(
            f"{label} is not a readable tar layer ({err}): save the image again"
        ) from err
    return counted.sha256.hexdigest()


def zlib_error() -> type[Exception]:
    """The error zlib raises on corrupt data (imported lazily: not every caller needs it)."""
    import zlib

    return zlib.error


class _Prefixed(io.RawIOBase):
    """``head`` (bytes already read) followed by the rest of ``inner``."""

    def __init__(self, head: bytes, inner: IO[bytes]) -> None:
        self.head = head
        self.inner = inner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.head:
            count = min(len(buffer), len(self.head))
            buffer[:count] = self.head[:count]
            self.head = self.head[count:]
            return count
        data = self.inner.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _Applier:
    """Applies the members of one layer, in order, below the root."""

    def __init__(self, root_fd: int, budget: LayerBudget, label: str, counted: _Counted) -> None:
        self.root_fd = root_fd
        self.budget = budget
        self.label = label
        self.counted = counted
        self.own: set[tuple[str, ...]] = set()

    def apply(self, info: tarfile.TarInfo, layer: tarfile.TarFile) -> None:
        """Check and write one member (or apply one whiteout)."""
        name = info.name.lstrip("/")
        parts = member_parts(name)
        what = f"member {info.name!r}"
        self._count(what, info)
        if not parts:
            return  # the root folder itself
        base = parts[-1]
        if base == OPAQUE:
            self._opaque(parts[:-1])
            return
        if base.startswith(WHITEOUT):
            self._whiteout(parts, what)
            return
        if info.ischr() and info.devmajor == 0 and info.devminor == 0:
            self._remove_at(parts)  # overlayfs' own whiteout
            return
        kind = special_member(info, links=True)
        if kind is not None:
            raise EntryImageError(
                f"{self.label}: {what} is a {kind}: an image may hold only files, folders and "
                "links; remove it from the image"
            )
        self.own.add(parts)
        if info.isdir():
            self._folder(parts)
        elif info.issym():
            self._symlink(parts, info.linkname, what)
        elif info.islnk():
            self._hardlink(parts, info.linkname, what)
        else:
            data = layer.extractfile(info)
            if data is None:
                raise EntryImageError(f"{self.label}: {what} has no data: save the image again")
            self._file(parts, data, info, what)

    def _count(self, what: str, info: tarfile.TarInfo) -> None:
        budget = self.budget
        budget.members += 1
        if budget.members > budget.max_files:
            raise EntryImageError(
                f"{self.label}: at {what} the image holds more than {budget.max_files} files "
                "and folders: make the image smaller"
            )
        if not info.isreg():
            return
        if budget.written + info.size > budget.max_bytes:
            raise EntryImageError(
                f"{self.label}: {what} ({human_bytes(info.size)}) brings the image over its "
                f"{human_bytes(budget.max_bytes)} limit: make the image smaller"
            )
        expanded, packed = self.counted.size + info.size, self.counted.packed
        if expanded > RATIO_FLOOR_BYTES and expanded > budget.max_ratio * packed:
            raise EntryImageError(
                f"{self.label}: at {what} the layer expands from {human_bytes(packed)} to "
                f"{human_bytes(expanded)}, more than {budget.max_ratio:g} times: this looks "
                "like a decompression bomb; save the image with ordinary layers"
            )

    def _parent(self, parts: tuple[str, ...], *, create: bool) -> int:
        """A descriptor of ``parts``' parent folder, resolved inside the root."""
        try:
            return open_inside(self.root_fd, parts[:-1], create=create)
        except (NotADirectoryError, FileNotFoundError, _LinkLoopError) as err:
            raise EntryImageError(
                f"{self.label}: the folder of {'/'.join(parts)!r} cannot be reached inside "
                f"the image ({err}): save the image again"
            ) from err

    def _remove_at(self, parts: tuple[str, ...]) -> None:
        try:
            parent = open_inside(self.root_fd, parts[:-1], create=False)
        except (NotADirectoryError, FileNotFoundError, _LinkLoopError):
            return
        try:
            remove_entry(parent, parts[-1])
        finally:
            os.close(parent)

    def _whiteout(self, parts: tuple[str, ...], what: str) -> None:
        hidden = parts[-1].removeprefix(WHITEOUT)
        if hidden.startswith(WHITEOUT):
            return  # other aufs metadata (.wh..wh.plnk): nothing to apply
        if hidden in ("", ".", ".."):
            raise EntryImageError(
                f"{self.label}: {what} is a whiteout of {hidden or 'nothing'!r}: refused; "
                "save the image again"
            )
        self._remove_at((*parts[:-1], hidden))

    def _opaque(self, folder: tuple[str, ...]) -> None:
        try:
            fd = open_inside(self.root_fd, folder, create=True)
        except (NotADirectoryError, FileNotFoundError, _LinkLoopError):
            return
        try:
            for name in os.listdir(fd):
                if (*folder, name) not in self.own:
                    remove_entry(fd, name)
        finally:
            os.close(fd)

    def _folder(self, parts: tuple[str, ...]) -> None:
        parent = self._parent(parts, create=True)
        try:
            with contextlib.suppress(FileNotFoundError):
                mode = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False).st_mode
                if not stat.S_ISDIR(mode):
                    remove_entry(parent, parts[-1])
            with contextlib.suppress(FileExistsError):
                os.mkdir(parts[-1], fsafe.DIR_MODE, dir_fd=parent)
            os.chmod(parts[-1], fsafe.DIR_MODE, dir_fd=parent, follow_symlinks=False)
        finally:
            os.close(parent)

    def _symlink(self, parts: tuple[str, ...], target: str, what: str) -> None:
        if not target or "\0" in target or len(target) > MAX_LINK_TARGET:
            raise EntryImageError(f"{self.label}: {what} is a link with an invalid target")
        parent = self._parent(parts, create=True)
        try:
            remove_entry(parent, parts[-1])
            os.symlink(target, parts[-1], dir_fd=parent)
        finally:
            os.close(parent)

    def _hardlink(self, parts: tuple[str, ...], target: str, what: str) -> None:
        source = member_parts(target.lstrip("/"))
        if source == parts:
            return
        try:
            source_dir = open_inside(self.root_fd, source[:-1], create=False)
        except (NotADirectoryError, FileNotFoundError, _LinkLoopError):
            source_dir = None
        try:
            info = (
                os.stat(source[-1], dir_fd=source_dir, follow_symlinks=False)
                if source_dir is not None and source
                else None
            )
        except FileNotFoundError:
            info = None
        if source_dir is None or info is None or not stat.S_ISREG(info.st_mode):
            if source_dir is not None:
                os.close(source_dir)
            raise EntryImageError(
                f"{self.label}: {what} is a hard link to {target!r}, which is not a file of the "
                "image above it: save the image again"
            )
        parent = self._parent(parts, create=True)
        try:
            remove_entry(parent, parts[-1])
            os.link(
                source[-1],
                parts[-1],
                src_dir_fd=source_dir,
                dst_dir_fd=parent,
                follow_symlinks=False,
            )
        finally:
            os.close(parent)
            os.close(source_dir)

    def _file(
        self, parts: tuple[str, ...], data: IO[bytes], info: tarfile.TarInfo, what: str
    ) -> None:
        parent = self._parent(parts, create=True)
        try:
            remove_entry(parent, parts[-1])
            chunks = _metered(data, info.size, self.budget, f"{self.label}: {what}")
            fsafe.write_file(parent, (parts[-1],), chunks, executable=bool(info.mode & 0o111))
        except OSError as err:
            raise PlatformError(f"cannot write {what} of an entry image: {err}") from err
        finally:
            os.close(parent)


def _metered(data: IO[bytes], size: int, budget: LayerBudget, what: str) -> Iterator[bytes]:
    left = size
    while chunk := data.read(min(_CHUNK, left + 1)):
        left -= len(chunk)
        budget.written += len(chunk)
        if left < 0 or budget.written > budget.max_bytes:
            raise EntryImageError(
                f"{what} holds more data than declared or brings the image over "
                f"{human_bytes(budget.max_bytes)}: make the image smaller"
            )
        yield chunk


def remove_entry(parent: int, name: str) -> None:
    """Remove ``name`` below ``parent`` (a folder with its contents); links are not followed."""
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(name, dir_fd=parent)
    else:
        os.unlink(name, dir_fd=parent)


class _LinkLoopError(OSError):
    """More links met than a path resolution allows."""


def open_inside(root_fd: int, parts: tuple[str, ...], *, create: bool) -> int:
    """Open the folder ``parts`` below ``root_fd`` as the image's own root would resolve it.

    Links met on the way are followed inside the root (an absolute target starts again from
    the root; ``..`` never climbs above it); missing folders are created when ``create``.
    Returns a new descriptor. Raises ``NotADirectoryError``, ``FileNotFoundError`` or
    ``OSError`` (a link loop).
    """
    pending = list(parts)
    current: list[str] = []
    hops = 0
    while pending:
        name = pending.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            if current:
                current.pop()
            continue
        target = _step(root_fd, current, name, create=create)
        if target is None:
            current.append(name)
            continue
        hops += 1
        if hops > MAX_LINK_HOPS:
            raise _LinkLoopError(f"more than {MAX_LINK_HOPS} links in {'/'.join(parts)}")
        if target.startswith("/"):
            current = []
        pending = [*target.split("/"), *pending]
    return fsafe.open_dir(root_fd, current, create=False)


def _step(root_fd: int, current: list[str], name: str, *, create: bool) -> str | None:
    """Look at ``name`` in the folder ``current``: None for a folder, a link's target."""
    folder = fsafe.open_dir(root_fd, current, create=False)
    try:
        try:
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            if not create:
                raise
            os.mkdir(name, fsafe.DIR_MODE, dir_fd=folder)
            os.chmod(name, fsafe.DIR_MODE, dir_fd=folder, follow_symlinks=False)
            return None
        if stat.S_ISLNK(info.st_mode):
            return os.readlink(name, dir_fd=folder)
        if not stat.S_ISDIR(info.st_mode):
            raise NotADirectoryError(f"{'/'.join([*current, name])} is not a folder")
        return None
    finally:
        os.close(folder)


def read_inside(root_fd: int, path: str, max_bytes: int) -> bytes | None:
    """The bytes of the regular file ``path`` resolved inside the root, or None if absent.

    Never follows a link out of the root; reads at most ``max_bytes``.
    """
    parts = tuple(part for part in path.split("/") if part)
    try:
        folder = open_inside(root_fd, parts[:-1], create=False)
    except OSError:
        return None
    try:
        name = parts[-1]
        for _ in range(MAX_LINK_HOPS):
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
            if not stat.S_ISLNK(info.st_mode):
                break
            target = os.readlink(name, dir_fd=folder)
            os.close(folder)
            folder = -1
            whole = tuple(p for p in target.split("/") if p)
            base = () if target.startswith("/") else parts[:-1]
            parts = (*base, *whole)
            folder = open_inside(root_fd, parts[:-1], create=False)
            name = parts[-1]
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        fd = os.open(name, flags, dir_fd=folder)
    except (OSError, IndexError):
        return None
    finally:
        if folder >= 0:
            os.close(folder)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read(max_bytes)
