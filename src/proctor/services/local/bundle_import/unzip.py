"""Unpacking a bundle's zips within one budget: the entry unpacker's limits, bytes counted.

The bundle zip and every zip inside it that the import unpacks (a zipped program, reference
data) draw on one budget per import (:func:`unpack_budget`), with the limits of an entry
archive (``proctor.entries.limits``): the total bytes written, one member's bytes, and the
compression ratio of each member and of each zip. The headers are checked before a member is
written, and the bytes really written are counted while writing, since a header can lie. Past
a limit the import is refused, naming the zip, the member and the option that raises it.
Only plain files and folders are unpacked: link members are skipped, names leaving the
folder refused.
"""

from __future__ import annotations

import re
import stat
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import IO

from proctor.entries.limits import DEFAULT_LIMITS, ArchiveLimits, human_bytes
from proctor.errors import ConfigError, UsageError

CHUNK = 1 << 20
SIZE = re.compile(r"^\s*(\d+)\s*([KMGT]?)(i?B)?\s*$", re.IGNORECASE)
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
BYTES_OPTION = "raise it with `proctor challenge import --max-bytes`"
RATIO_OPTION = "if the data is genuine, raise the limit with `proctor challenge import --max-ratio`"


@dataclass
class UnpackBudget:
    """The limits of one import and the bytes its zips have written so far."""

    limits: ArchiveLimits
    written: int = 0


_CURRENT: ContextVar[UnpackBudget | None] = ContextVar("bundle_unpack_budget", default=None)


def import_limits(max_bytes: int | None = None, max_ratio: float | None = None) -> ArchiveLimits:
    """The entry unpacker's limits, with the total (and one member's) bytes or ratio raised."""
    limits = DEFAULT_LIMITS
    if max_bytes is not None:
        if max_bytes <= 0:
            raise UsageError(f"--max-bytes {max_bytes}: give a positive number of bytes")
        limits = replace(limits, max_total_bytes=max_bytes, max_member_bytes=max_bytes)
    if max_ratio is not None:
        if max_ratio <= 1:
            raise UsageError(f"--max-ratio {max_ratio:g}: give a ratio above 1")
        limits = replace(limits, max_ratio=max_ratio)
    return limits


def parse_size(text: str) -> int:
    """Bytes from ``1073741824``, ``512M``, ``2G`` or ``2GiB`` (powers of 1024)."""
    found = SIZE.match(text)
    if found is None:
        raise UsageError(f"{text!r} is not a size: write bytes, or a number with K, M, G or T")
    return int(found.group(1)) * UNITS[found.group(2).upper()]


@contextmanager
def unpack_budget(limits: ArchiveLimits) -> Iterator[UnpackBudget]:
    """Make every :func:`safe_extract` inside the ``with`` draw on one new budget."""
    budget = UnpackBudget(limits)
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)


def current_budget() -> UnpackBudget:
    """The budget of the import under way, or a fresh one with the default limits."""
    return _CURRENT.get() or UnpackBudget(DEFAULT_LIMITS)


def safe_extract(archive: Path, dest: Path) -> None:
    """Unpack ``archive`` into ``dest``: plain files and folders, nothing outside, within budget."""
    dest.mkdir(parents=True, exist_ok=True)
    meter = _Meter(current_budget(), archive, archive.stat().st_size)
    try:
        with zipfile.ZipFile(archive) as zipped:
            for info in zipped.infolist():
                _extract_one(zipped, info, meter, dest)
    except zipfile.BadZipFile as err:
        raise ConfigError(
            f"not a readable zip archive ({err}): re-create it", path=archive
        ) from None


@dataclass
class _Meter:
    """The bytes one zip writes, against the import's budget."""

    budget: UnpackBudget
    archive: Path
    packed: int
    written: int = 0

    def refuse(self, member: str, why: str) -> ConfigError:
        return ConfigError(f"{self.archive.name}: member {member!r} {why}", path=self.archive)

    def check_header(self, info: zipfile.ZipInfo) -> None:
        """Refuse a member whose declared size or ratio is over the limits already."""
        limits = self.budget.limits
        self.check_member(info, info.file_size)
        if self.budget.written + info.file_size > limits.max_total_bytes:
            raise self.over_total(info.filename)

    def check_member(self, info: zipfile.ZipInfo, size: int) -> None:
        limits = self.budget.limits
        if size > limits.max_member_bytes:
            raise self.refuse(
                info.filename,
                f"is over {human_bytes(limits.max_member_bytes)}, the limit for one file: "
                f"{BYTES_OPTION}",
            )
        if size >= limits.ratio_floor_bytes and size > limits.max_ratio * max(
            info.compress_size, 1
        ):
            raise self.refuse(
                info.filename,
                f"expands from {human_bytes(info.compress_size)} to {human_bytes(size)}, "
                f"over {limits.max_ratio:g} times: this looks like a zip "
                f"bomb; {RATIO_OPTION}",
            )

    def over_total(self, member: str) -> ConfigError:
        limits = self.budget.limits
        return self.refuse(
            member,
            f"brings the bundle's unpacked zips over {human_bytes(limits.max_total_bytes)}: "
            f"{BYTES_OPTION}",
        )

    def chunks(self, info: zipfile.ZipInfo, reading: IO[bytes]) -> Iterator[bytes]:
        """``reading``'s data, counted against every limit as it comes out."""
        limits, size = self.budget.limits, 0
        while data := reading.read(CHUNK):
            size += len(data)
            self.written += len(data)
            self.budget.written += len(data)
            self.check_member(info, size)
            if self.budget.written > limits.max_total_bytes:
                raise self.over_total(info.filename)
            if self.written >= limits.ratio_floor_bytes and self.written > limits.max_ratio * max(
                self.packed, 1
            ):
                raise self.refuse(
                    info.filename,
                    f"brings the zip ({human_bytes(self.packed)}) over {limits.max_ratio:g} "
                    f"times its size: this looks like a zip bomb; {RATIO_OPTION}",
                )
            yield data


def _extract_one(zipped: zipfile.ZipFile, info: zipfile.ZipInfo, meter: _Meter, dest: Path) -> None:
    name = PurePosixPath(info.filename.replace("\\", "/"))
    if name.is_absolute() or ".." in name.parts or not name.parts:
        raise ConfigError(f"{info.filename!r} would land outside the folder", path=meter.archive)
    if name.parts[0] == "__MACOSX" or stat.S_ISLNK(info.external_attr >> 16):
        return
    target = dest.joinpath(*name.parts)
    if info.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        return
    meter.check_header(info)
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipped.open(info) as reading, target.open("wb") as writing:
        for data in meter.chunks(info, reading):
            writing.write(data)
