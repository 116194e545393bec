"""Building entry archives in memory, hostile ones included, for the tests.

``build_zip`` and ``build_tar`` write whatever ``Item`` values describe (links, devices,
duplicates, odd names) with the standard writers. ``zip_bomb`` writes a deflated file of zeros
by hand in well under a second (repeating one fully flushed deflate block), and the ``patch_*``
functions forge central-directory and local headers afterwards: lying sizes, wrong CRCs,
names the ``zipfile`` writer refuses to produce (with a NUL, say).
"""

from __future__ import annotations

import gzip
import io
import stat
import struct
import tarfile
import warnings
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

ItemKind = Literal["file", "dir", "symlink", "hardlink", "chardev", "blockdev", "fifo"]

_ZIP_MODES = {
    "file": stat.S_IFREG,
    "dir": stat.S_IFDIR,
    "symlink": stat.S_IFLNK,
    "chardev": stat.S_IFCHR,
    "blockdev": stat.S_IFBLK,
    "fifo": stat.S_IFIFO,
}
_TAR_TYPES = {
    "file": tarfile.REGTYPE,
    "dir": tarfile.DIRTYPE,
    "symlink": tarfile.SYMTYPE,
    "hardlink": tarfile.LNKTYPE,
    "chardev": tarfile.CHRTYPE,
    "blockdev": tarfile.BLKTYPE,
    "fifo": tarfile.FIFOTYPE,
}
_UNIX = 3
_LOCAL = struct.Struct("<4s5H3L2H")
_CENTRAL = struct.Struct("<4s6H3L5H2L")
_END = struct.Struct("<4s4H2LH")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Item:
    """One member to write: ``data`` for files, ``target`` for links, ``mode`` permission bits."""

    name: str
    data: bytes = b""
    kind: ItemKind = "file"
    mode: int = 0o644
    target: str = ""


def build_zip(items: Iterable[Item], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A zip archive holding ``items`` in order (duplicates allowed); hard links are refused."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Duplicate name" is the point here
        for item in items:
            if item.kind == "hardlink":
                raise ValueError("zip has no hard links; use build_tar")
            name = item.name + "/" if item.kind == "dir" and not item.name.endswith("/") else ""
            info = zipfile.ZipInfo(name or item.name, date_time=(2018, 1, 1, 0, 0, 0))
            info.create_system = _UNIX
            info.external_attr = (_ZIP_MODES[item.kind] | item.mode) << 16
            info.compress_type = compression
            data = item.target.encode() if item.kind == "symlink" else item.data
            archive.writestr(info, data)
    return buffer.getvalue()


def build_tar(items: Iterable[Item], *, gzipped: bool = True) -> bytes:
    """A tar (gzip-compressed if ``gzipped``) holding ``items`` in order."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for item in items:
            info = tarfile.TarInfo(item.name)
            info.type = _TAR_TYPES[item.kind]
            info.mode = item.mode
            info.linkname = item.target
            info.mtime = 1_514_764_800
            if item.kind in ("chardev", "blockdev"):
                info.devmajor, info.devminor = 1, 3
            info.size = len(item.data) if item.kind == "file" else 0
            archive.addfile(info, io.BytesIO(item.data) if item.kind == "file" else None)
    data = buffer.getvalue()
    return gzip.compress(data, mtime=0) if gzipped else data


def zip_bomb(size: int, *, name: str = "bomb.bin") -> bytes:
    """A valid zip holding one deflated file of ``size`` zero bytes (honest headers).

    About 1 KiB of archive per MiB of content; ``size`` must stay below 4 GiB (no zip64).
    """
    if not 0 <= size < 1 << 32:
        raise ValueError(f"size must be in [0, 4 GiB), not {size}")
    full, tail = divmod(size, _CHUNK)
    stream = _flushed_zeros(_CHUNK) * full + (_flushed_zeros(tail) if tail else b"") + b"\x03\x00"
    crc = 0
    zeros = bytes(_CHUNK)
    for _ in range(full):
        crc = zlib.crc32(zeros, crc)
    crc = zlib.crc32(bytes(tail), crc)
    encoded = name.encode()
    fields = (zipfile.ZIP_DEFLATED, 0, 0x4C21, crc, len(stream), size, len(encoded))
    local = _LOCAL.pack(b"PK\x03\x04", 20, 0, *fields, 0) + encoded
    central = _CENTRAL.pack(
        b"PK\x01\x02", _UNIX << 8 | 20, 20, 0, *fields, 0, 0, 0, 0, 0o100644 << 16, 0
    )
    central += encoded
    end = _END.pack(b"PK\x05\x06", 0, 0, 1, 1, len(central), len(local) + len(stream), 0)
    return local + stream + central + end


def patch_zip_member(
    data: bytes,
    name: str,
    *,
    size: int | None = None,
    packed: int | None = None,
    crc: int | None = None,
    flag_bits: int | None = None,
    method: int | None = None,
) -> bytes:
    """Forge the sizes, CRC, flag bits or compression method that member ``name`` declares.

    Both the central-directory record and the local header are patched, as a careful forger
    would, so that they agree with each other and only disagree with the data.
    """
    out = bytearray(data)
    central, local = _locate(data, name)
    for offset, base in ((central, 16), (local, 14)):
        for value, delta in ((crc, 0), (packed, 4), (size, 8)):
            if value is not None:
                struct.pack_into("<L", out, offset + base + delta, value)
        for value, delta in ((flag_bits, -8), (method, -6)):
            if value is not None:
                struct.pack_into("<H", out, offset + base + delta, value)
    return bytes(out)


def zip_crc(data: bytes, name: str) -> int:
    """The CRC-32 that member ``name``'s central-directory record declares."""
    central, _ = _locate(data, name)
    value: int = struct.unpack_from("<L", data, central + 16)[0]
    return value


def rename_zip_member(data: bytes, old: str, new: str) -> bytes:
    """Rename member ``old`` to ``new`` in both headers (same length in bytes; NUL allowed)."""
    old_b, new_b = old.encode(), new.encode()
    if len(old_b) != len(new_b):
        raise ValueError("the new name must have as many bytes as the old one")
    out = bytearray(data)
    central, local = _locate(data, old)
    for offset, start in ((central, _CENTRAL.size), (local, _LOCAL.size)):
        out[offset + start : offset + start + len(old_b)] = new_b
    return bytes(out)


def _flushed_zeros(count: int) -> bytes:
    """``count`` zeros as non-final, byte-aligned deflate blocks that can be repeated at will."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(bytes(count)) + compressor.flush(zlib.Z_FULL_FLUSH)


def _locate(data: bytes, name: str) -> tuple[int, int]:
    """Offsets of member ``name``'s central-directory record and local header."""
    end = data.rindex(b"PK\x05\x06")
    _, _, _, _, count, _, offset, _ = _END.unpack_from(data, end)
    for _ in range(count):
        record = _CENTRAL.unpack_from(data, offset)
        name_len, extra_len, comment_len, local = record[10], record[11], record[12], record[16]
        start = offset + _CENTRAL.size
        if data[start : start + name_len] == name.encode():
            return offset, local
        offset = start + name_len + extra_len + comment_len
    raise KeyError(name)
