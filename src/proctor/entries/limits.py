"""Caps on an entry archive and the inventory that checks declared sizes before writing.

Every reader (zip, tar, folder) turns its native entries into ``Member`` values; the
``Inventory`` checks them one by one — duplicates, file/folder clashes, counts, sizes and
compression ratios — so a bomb is refused from its headers alone, before a byte is written.
The bytes are counted again while extracting (see ``unpack``), because headers can lie.
"""

from __future__ import annotations

import enum
import stat
from dataclasses import dataclass, field

from proctor.entries.litter import litter_prefix, shown_name
from proctor.errors import ArchiveError

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


@dataclass(frozen=True)
class ArchiveLimits:
    """What an unpacked entry may cost.

    ``max_total_bytes`` caps the sum of file sizes, ``max_files`` the number of files and
    folders, ``max_member_bytes`` one file. ``max_ratio`` caps uncompressed/compressed size,
    for each member and for the whole archive; it is only applied once the uncompressed size
    reaches ``ratio_floor_bytes``, since small files of blanks legitimately compress very well.
    """

    max_total_bytes: int = 1 * GiB
    max_files: int = 10_000
    max_ratio: float = 200.0
    max_member_bytes: int = 512 * MiB
    ratio_floor_bytes: int = 1 * MiB


DEFAULT_LIMITS = ArchiveLimits()


class Kind(enum.Enum):
    """The only two kinds of member an entry may hold."""

    FILE = "file"
    DIR = "folder"


@dataclass(frozen=True)
class Member:
    """One archive member as its headers declare it.

    ``name`` is the name as stored (for messages), ``parts`` its safe path components,
    ``size`` the declared uncompressed size in bytes, ``packed`` the compressed size in bytes
    when the format records it per member (zip), else ``None``.
    """

    name: str
    parts: tuple[str, ...]
    kind: Kind
    size: int = 0
    packed: int | None = None
    executable: bool = False


_SPECIAL_KINDS = (
    (stat.S_ISLNK, "symbolic link"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISFIFO, "FIFO (named pipe)"),
    (stat.S_ISSOCK, "socket"),
)


def special_kind(mode: int) -> str | None:
    """Name the kind of a non-regular, non-folder ``st_mode`` (``"symbolic link"``), else None."""
    for test, word in _SPECIAL_KINDS:
        if test(mode):
            return word
    return None


def is_skipped(member: Member) -> bool:
    """True for members never extracted: the root folder itself and OS/VCS litter."""
    return (member.kind is Kind.DIR and not member.parts) or litter_of(member) is not None


def litter_of(member: Member) -> str | None:
    """How the litter item holding ``member`` is listed (``.git/``, ``a/.DS_Store``), else None."""
    is_dir = member.kind is Kind.DIR
    prefix = litter_prefix(member.parts, is_dir=is_dir)
    if prefix is None:
        return None
    return shown_name(prefix, is_folder=is_dir or prefix != member.parts)


def human_bytes(count: float) -> str:
    """Format a byte count for a participant: ``1.5 MiB``."""
    for unit in ("bytes", "KiB", "MiB"):
        if count < 1024:
            return f"{count:.0f} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GiB"


@dataclass
class Inventory:
    """The members accepted so far, checked against ``limits`` as each one is added.

    ``packed_total`` is the archive's size on disk in bytes (``None`` for a folder source),
    used for the whole-archive compression ratio.
    """

    limits: ArchiveLimits
    packed_total: int | None
    members: list[Member] = field(default_factory=list, init=False)
    files: set[tuple[str, ...]] = field(default_factory=set, init=False)
    dirs: set[tuple[str, ...]] = field(default_factory=set, init=False)
    declared: int = field(default=0, init=False)
    _named_dirs: set[tuple[str, ...]] = field(default_factory=set, init=False, repr=False)

    def add(self, member: Member) -> None:
        """Accept ``member`` or raise ``ArchiveError`` naming it and the fix."""
        if not member.parts:
            raise ArchiveError(f"member {member.name!r} has no file name: rename it")
        self._place(member)
        count = len(self.files) + len(self.dirs)
        if count > self.limits.max_files:
            raise ArchiveError(
                f"member {member.name!r} brings the entry over {self.limits.max_files} files "
                "and folders: remove what the entry does not need"
            )
        if member.kind is Kind.FILE:
            self._weigh(member)
        self.members.append(member)

    def top_folder(self) -> str | None:
        """The single top-level folder when nothing else sits at the top level, else None."""
        tops = {parts[0] for parts in self.files | self.dirs}
        if len(tops) == 1:
            (top,) = tops
            if (top,) in self.dirs:
                return top
        return None

    def _place(self, member: Member) -> None:
        """Record where ``member`` goes; refuse duplicates and file/folder clashes."""
        parts, what = member.parts, f"member {member.name!r}"
        for depth in range(1, len(parts)):
            if parts[:depth] in self.files:
                clash = "/".join(parts[:depth])
                raise ArchiveError(
                    f"{what} needs {clash!r} to be a folder, but the archive also holds a file "
                    f"named {clash!r}: rename one of them"
                )
            self.dirs.add(parts[:depth])
        path = "/".join(parts)
        if parts in self.files or parts in self._named_dirs:
            alias = f" (as {path!r})" if path != member.name.rstrip("/") else ""
            raise ArchiveError(
                f"{what} appears more than once in the archive{alias}: keep one copy"
            )
        if member.kind is Kind.DIR:
            self._named_dirs.add(parts)
            self.dirs.add(parts)
        elif parts in self.dirs:
            raise ArchiveError(
                f"{what} is a file, but other members use {path!r} as a folder: rename one of them"
            )
        else:
            self.files.add(parts)

    def _weigh(self, member: Member) -> None:
        """Check one file's declared size and ratio, and the running totals."""
        limits, what = self.limits, f"member {member.name!r}"
        if member.size > limits.max_member_bytes:
            raise ArchiveError(
                f"{what} is {human_bytes(member.size)}, over the "
                f"{human_bytes(limits.max_member_bytes)} limit for one file: make it smaller"
            )
        if member.packed is not None:
            _check_member_ratio(member, limits)
        self.declared += member.size
        if self.declared > limits.max_total_bytes:
            raise ArchiveError(
                f"{what} brings the unpacked entry over {human_bytes(limits.max_total_bytes)}: "
                "make the entry smaller"
            )
        packed = self.packed_total
        if (
            packed is not None
            and self.declared >= limits.ratio_floor_bytes
            and self.declared > limits.max_ratio * max(packed, 1)
        ):
            raise ArchiveError(
                f"at member {member.name!r} the archive expands to more than "
                f"{limits.max_ratio:g} times its size ({human_bytes(packed)}): this looks like "
                "a zip bomb; store data that compresses less or generate it in setup.sh"
            )


def _check_member_ratio(member: Member, limits: ArchiveLimits) -> None:
    """Refuse a member whose sizes disagree or whose compression ratio is a bomb's."""
    packed = member.packed or 0
    if packed > member.size + member.size // 50 + 4 * KiB:
        raise ArchiveError(
            f"member {member.name!r} declares {member.size} bytes but holds {packed} compressed "
            "bytes: its header is corrupt or forged; re-create the archive"
        )
    if member.size >= limits.ratio_floor_bytes and member.size > limits.max_ratio * max(packed, 1):
        raise ArchiveError(
            f"member {member.name!r} expands from {human_bytes(packed)} to "
            f"{human_bytes(member.size)}, more than {limits.max_ratio:g} times: this looks like a "
            "zip bomb; store data that compresses less or generate it in setup.sh"
        )
