"""Reading a tar or tar.gz entry as a forward-only stream.

``tarfile`` is used in stream mode (``r|``), so nothing seeks backwards and data is only ever
decompressed once per pass. Two of its leniencies are closed: a corrupt or truncated header in
the middle of an archive silently ends it there, and pax/GNU long-name headers are read whole
into memory whatever size they declare. After the last member, the rest of a gzip stream is
read so its CRC and length trailer are verified before anything is written.
"""

from __future__ import annotations

import contextlib
import gzip
import tarfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO, BinaryIO, Self, cast

from proctor.entries.limits import Kind, Member, MiB
from proctor.entries.names import member_parts
from proctor.errors import ArchiveError

MAX_META_BYTES = 1 * MiB
"""Largest pax or GNU long-name header accepted, in bytes."""

MAX_TOTAL_META_BYTES = 4 * MiB
"""Most metadata (pax, pax global, GNU long-name headers) one archive may carry, in bytes."""

SPARSE_REFUSED = (
    "sparse files (GNU sparse headers) are not accepted in an entry: archive regular files"
)

MAX_TRAILER_BYTES = 16 * MiB
"""Most data accepted after the end of the tar data inside a gzip stream, in bytes."""

_META_TYPES = {
    tarfile.XHDTYPE,
    tarfile.XGLTYPE,
    tarfile.SOLARIS_XHDTYPE,
    tarfile.GNUTYPE_LONGNAME,
    tarfile.GNUTYPE_LONGLINK,
}
# The clean ends of an archive: a zero block, or the end of the data on a block boundary.
# typeshed does not list these (real, long-standing) tarfile classes.
_END_OF_ARCHIVE: tuple[type[Exception], ...] = (
    tarfile.EOFHeaderError,  # type: ignore[attr-defined]
    tarfile.EmptyHeaderError,  # type: ignore[attr-defined]
)


class _GuardedTarInfo(tarfile.TarInfo):
    """A ``TarInfo`` that refuses oversized metadata headers and corrupt mid-archive headers.

    Both raise ``tarfile.ReadError``, which the caller reports with the last good member.
    """

    @classmethod
    def fromtarfile(cls, archive: tarfile.TarFile) -> Self:
        try:
            return super().fromtarfile(archive)
        except _END_OF_ARCHIVE:
            raise
        except tarfile.HeaderError as exc:
            # TarFile.next() would take this for the end of the archive and stop quietly.
            raise tarfile.ReadError(f"corrupt or truncated tar header: {exc}") from exc

    def _proc_member(self, archive: tarfile.TarFile) -> tarfile.TarInfo:
        # _proc_member is the hook tarfile documents for subclasses; it runs before the
        # header's payload (or a sparse map) is read into memory.
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise tarfile.ReadError(SPARSE_REFUSED)
        if self.type in _META_TYPES:
            if self.size > MAX_META_BYTES:
                raise tarfile.ReadError(
                    f"a tar metadata header declares {self.size} bytes, over {MAX_META_BYTES}"
                )
            total = getattr(archive, "_proctor_meta_bytes", 0) + self.size
            if total > MAX_TOTAL_META_BYTES:
                raise tarfile.ReadError(
                    f"the archive's metadata headers come to over {MAX_TOTAL_META_BYTES} bytes: "
                    "archive plain files with short names"
                )
            archive._proctor_meta_bytes = total  # type: ignore[attr-defined]
        result: tarfile.TarInfo = super()._proc_member(archive)  # type: ignore[misc]
        return result

    # pax headers may announce GNU sparse maps too (formats 0.0, 0.1, 1.0): refused before
    # the map (in the header, or at the start of the data) is parsed.
    def _proc_gnusparse_00(self, *args: object) -> None:
        raise tarfile.ReadError(SPARSE_REFUSED)

    def _proc_gnusparse_01(self, *args: object) -> None:
        raise tarfile.ReadError(SPARSE_REFUSED)

    def _proc_gnusparse_10(self, *args: object) -> None:
        raise tarfile.ReadError(SPARSE_REFUSED)


GuardedTarInfo = _GuardedTarInfo
"""The ``tarinfo`` class other readers of untrusted tar streams use (an entry image's layers)."""


class TarSource:
    """A tar archive on disk, gzip-compressed or not; ``packed_size`` is its size in bytes."""

    def __init__(self, path: Path, *, gzipped: bool) -> None:
        self.path = path
        self.gzipped = gzipped
        self.packed_size: int | None = path.stat().st_size

    def members(self) -> Generator[Member, None, None]:
        """Every member as its header declares it; then verify the gzip trailer."""
        with self._open() as (archive, stream):
            while (info := archive.next()) is not None:
                yield tar_member(info)
            if self.gzipped:
                _drain(stream)

    def contents(self) -> Generator[tuple[Member, IO[bytes] | None], None, None]:
        """Every member with a stream of its data (``None`` for folders), in archive order."""
        with self._open() as (archive, _):
            while (info := archive.next()) is not None:
                member = tar_member(info)
                data = archive.extractfile(info) if member.kind is Kind.FILE else None
                yield member, data

    @contextlib.contextmanager
    def _open(self) -> Iterator[tuple[tarfile.TarFile, BinaryIO]]:
        with contextlib.ExitStack() as stack:
            stream: BinaryIO = stack.enter_context(self.path.open("rb"))
            if self.gzipped:
                unzipped = stack.enter_context(gzip.GzipFile(fileobj=stream, mode="rb"))
                stream = cast(BinaryIO, unzipped)
            archive = stack.enter_context(
                tarfile.open(fileobj=cast(IO[bytes], stream), mode="r|", tarinfo=_GuardedTarInfo)
            )
            yield archive, stream


def tar_member(info: tarfile.TarInfo) -> Member:
    """Turn one tar header into a ``Member`` or raise ``ArchiveError`` naming it."""
    name = info.name
    what = f"member {name!r}"
    parts = member_parts(name)
    if info.issym():
        raise ArchiveError(
            f"{what} is a symbolic link (to {info.linkname!r}): archives may not contain links; "
            "put the file itself in the archive (tar --dereference)"
        )
    if info.islnk():
        raise ArchiveError(
            f"{what} is a hard link (to {info.linkname!r}): archives may not contain links; "
            "re-create the archive with tar --hard-dereference"
        )
    kind = special_member(info)
    if kind is not None:
        raise ArchiveError(
            f"{what} is a {kind}: archives may contain only regular files and folders; remove it"
        )
    if info.isdir():
        return Member(name, parts, Kind.DIR)
    return Member(name, parts, Kind.FILE, size=info.size, executable=bool(info.mode & 0o111))


def special_member(info: tarfile.TarInfo, *, links: bool = False) -> str | None:
    """Name the kind of a member Proctor refuses; None for a file or folder.

    With ``links``, symbolic and hard links are allowed too (an image's layers hold them).
    """
    if info.ischr():
        return "character device"
    if info.isblk():
        return "block device"
    if info.isfifo():
        return "FIFO (named pipe)"
    if info.issparse():
        return "sparse file (re-create the archive without --sparse)"
    if not (info.isreg() or info.isdir() or (links and (info.issym() or info.islnk()))):
        return f"member of unsupported tar type {info.type!r}"
    return None


def _drain(stream: BinaryIO) -> None:
    """Read what follows the tar data so gzip checks its CRC; refuse a long tail."""
    seen = 0
    while chunk := stream.read(MiB):
        seen += len(chunk)
        if seen > MAX_TRAILER_BYTES:
            raise ArchiveError(
                f"the archive holds more than {MAX_TRAILER_BYTES} bytes after the end of the "
                "tar data: re-create it with tar"
            )
