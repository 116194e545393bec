"""Unpacking an uploaded entry (zip, tar.gz, tar or folder) into a fresh folder, safely.

Two passes over the source. The first reads only headers: names, kinds, duplicates, counts,
declared sizes and compression ratios are checked by an ``Inventory`` before a byte is written.
The second writes each member through ``fsafe`` (no link is ever followed) while counting the
bytes that really come out, since headers can lie. Any failure removes everything written.
"""

from __future__ import annotations

import lzma
import tarfile
import zipfile
import zlib
from collections.abc import Generator, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from proctor.entries import fsafe
from proctor.entries.foldersource import FolderSource
from proctor.entries.limits import (
    DEFAULT_LIMITS,
    ArchiveLimits,
    Inventory,
    Kind,
    Member,
    MiB,
    human_bytes,
    is_skipped,
    litter_of,
)
from proctor.entries.tarsource import TarSource
from proctor.entries.zipsource import ZipSource
from proctor.errors import ArchiveError, PlatformError

CHUNK_BYTES = 1 * MiB

# What the standard readers raise on damaged input; only ever caught around reads.
_READ_ERRORS = (
    zipfile.BadZipFile,
    tarfile.TarError,
    zlib.error,
    lzma.LZMAError,
    EOFError,
    OSError,
    NotImplementedError,
    ValueError,
)


class Source(Protocol):
    """Where members come from: a zip, a tar stream or a folder."""

    packed_size: int | None

    def members(self) -> Generator[Member, None, None]:
        """Every member as declared, checked for kind and name; no data is read."""
        ...

    def contents(self) -> Generator[tuple[Member, IO[bytes] | None], None, None]:
        """Every member again, with a stream of its data (``None`` for folders)."""
        ...


@dataclass(frozen=True, slots=True)
class UnpackedEntry:
    """An unpacked entry: its ``root`` folder and the OS/VCS litter left out (as listed).

    ``unwrapped`` names the archive's single top-level folder when it was taken as the root
    (``""`` when the root is the archive's top level).
    """

    root: Path
    ignored: tuple[str, ...] = ()
    unwrapped: str = ""


def unwrapped_note(folder: str) -> str:
    """The clause telling a participant that ``folder`` was taken as their entry's root."""
    return (
        f"the upload's single top-level folder {folder}/ was taken as the entry's root "
        "(paths are read from inside it)"
    )


def unpack_entry(
    source: Path,
    dest: Path,
    *,
    limits: ArchiveLimits = DEFAULT_LIMITS,
    root_names: frozenset[str] = frozenset(),
) -> Path:
    """Unpack the entry ``source`` into ``dest`` and return the entry's root folder.

    The same as ``unpack_upload`` without the list of what was left out.
    """
    return unpack_upload(source, dest, limits=limits, root_names=root_names).root


def unpack_upload(
    source: Path,
    dest: Path,
    *,
    limits: ArchiveLimits = DEFAULT_LIMITS,
    root_names: frozenset[str] = frozenset(),
) -> UnpackedEntry:
    """Unpack the entry ``source`` into ``dest``: its root folder and the litter left out.

    ``source`` is a ``.zip``, ``.tar.gz``/``.tgz`` or ``.tar`` file (recognised by content) or a
    folder. ``dest`` must not exist or be empty. The root is ``dest/NAME`` when everything sits
    in one top-level folder ``NAME`` (as in PhysioNet's ``entry/``) that is not one of
    ``root_names`` (the names an entry's root itself holds, such as a predictions upload's
    ``test/``), else ``dest``; ``unwrapped`` then names it. Raises
    ``ArchiveError`` naming the member and the fix for anything unsafe, malformed or over
    ``limits``; ``PlatformError`` if writing fails on the host. On failure ``dest`` is removed
    (or emptied, if it existed). Operating-system and version-control litter (``.git/``,
    ``.DS_Store``, ``__MACOSX/``, see ``litter``) is left out and listed in ``ignored``.
    """
    reader = open_source(source)
    if isinstance(reader, FolderSource) and dest.resolve().is_relative_to(source.resolve()):
        raise ValueError(f"cannot copy the folder {source} into {dest}, which lies inside it")
    ignored: dict[str, None] = {}
    with fsafe.fresh_dest(dest) as dest_fd:
        inventory = _take_inventory(reader, source, limits, ignored)
        _extract(reader, source, inventory, dest_fd)
    top = inventory.top_folder()
    if top is None or top in root_names:
        return UnpackedEntry(dest, tuple(ignored))
    return UnpackedEntry(dest / top, tuple(ignored), top)


def open_source(source: Path) -> Source:
    """Pick the reader for ``source`` by its content, not its name."""
    if source.is_dir():
        return FolderSource(source)
    with source.open("rb") as stream:
        head = stream.read(512)
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return ZipSource(source)
    if head[:2] == b"\x1f\x8b":
        return TarSource(source, gzipped=True)
    if head[257:262] == b"ustar":
        return TarSource(source, gzipped=False)
    raise ArchiveError(
        f"{source.name} is not a zip, tar.gz or tar archive: upload the entry as a .zip or "
        ".tar.gz file"
    )


def _take_inventory(
    reader: Source, source: Path, limits: ArchiveLimits, ignored: dict[str, None]
) -> Inventory:
    """First pass: check every member's header against ``limits``; write nothing.

    The litter left out is added to ``ignored`` (in archive order, once each).
    """
    inventory = Inventory(limits, reader.packed_size)
    last: str | None = None
    try:
        with closing(reader.members()) as members:
            for member in members:
                litter = litter_of(member)
                if litter is not None:
                    ignored[litter] = None
                elif not is_skipped(member):
                    inventory.add(member)
                last = member.name
    except _READ_ERRORS as exc:
        raise _unreadable(source, last, exc) from exc
    if not inventory.files:
        raise ArchiveError(f"{source.name} holds no files: put the entry's files in it")
    return inventory


def _extract(reader: Source, source: Path, inventory: Inventory, dest_fd: int) -> None:
    """Second pass: write the members the inventory accepted, counting real bytes."""
    expected = iter(inventory.members)
    meter = ByteMeter(inventory.limits.max_total_bytes)
    last: str | None = None
    try:
        with closing(reader.contents()) as contents:
            for member, stream in contents:
                if is_skipped(member):
                    continue
                if member != next(expected, None):
                    raise _changed(source, member.name)
                _write(dest_fd, member, stream, meter)
                last = member.name
    except _READ_ERRORS as exc:
        raise _unreadable(source, last, exc) from exc
    if next(expected, None) is not None:
        raise _changed(source, last)


def _write(dest_fd: int, member: Member, stream: IO[bytes] | None, meter: ByteMeter) -> None:
    """Create one member below ``dest_fd``; host-side failures become ``PlatformError``."""
    try:
        if member.kind is Kind.DIR or stream is None:
            fsafe.make_dir(dest_fd, member.parts)
        else:
            chunks = meter.chunks(member, stream)
            fsafe.write_file(dest_fd, member.parts, chunks, executable=member.executable)
    except OSError as exc:
        raise PlatformError(f"cannot write member {member.name!r} of the entry: {exc}") from exc


class ByteMeter:
    """Counts the bytes really extracted, per member and in total."""

    def __init__(self, max_total_bytes: int) -> None:
        self.max_total_bytes = max_total_bytes
        self.total = 0

    def chunks(self, member: Member, stream: IO[bytes]) -> Iterator[bytes]:
        """Yield ``stream``'s data; raise once it exceeds the declared size or the total cap."""
        left = member.size
        while True:
            try:
                data = stream.read(min(CHUNK_BYTES, left + 1))
            except _READ_ERRORS as exc:
                raise ArchiveError(
                    f"member {member.name!r} is corrupt ({exc}): re-create the archive and "
                    "upload it again"
                ) from exc
            if not data:
                return
            left -= len(data)
            self.total += len(data)
            if left < 0:
                raise ArchiveError(
                    f"member {member.name!r} holds more data than the {member.size} bytes its "
                    "header declares: the archive is corrupt or forged; re-create it"
                )
            if self.total > self.max_total_bytes:
                raise ArchiveError(
                    f"at member {member.name!r} the unpacked entry grows over "
                    f"{human_bytes(self.max_total_bytes)}: make the entry smaller"
                )
            yield data


def _unreadable(source: Path, last: str | None, exc: BaseException) -> ArchiveError:
    where = f"at or after member {last!r}" if last is not None else "from its start"
    return ArchiveError(
        f"{source.name} cannot be read {where} ({exc}): it is corrupt or truncated; "
        "re-create it and upload it again"
    )


def _changed(source: Path, last: str | None) -> ArchiveError:
    return ArchiveError(
        f"{source.name} changed while it was being unpacked (near member {last!r}): upload it again"
    )
