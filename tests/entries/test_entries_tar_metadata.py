"""Hardening item 9: tar metadata is refused before it is parsed, and capped in total."""

from __future__ import annotations

import gzip
import io
import tarfile
import time
import tracemalloc
from pathlib import Path

import pytest

from proctor.entries import unpack_entry
from proctor.errors import ArchiveError


def _header(name: str, size: int, kind: bytes, extra: dict[int, bytes] | None = None) -> bytearray:
    block = bytearray(512)
    block[0 : len(name)] = name.encode()
    block[100:108] = b"0000644\x00"
    block[108:116] = block[116:124] = b"0000000\x00"
    block[124:136] = f"{size:011o}\x00".encode()
    block[136:148] = b"00000000000\x00"
    block[156:157] = kind
    block[257:263] = b"ustar "
    block[263:265] = b" \x00"
    for offset, data in (extra or {}).items():
        block[offset : offset + len(data)] = data
    block[148:156] = b"        "
    block[148:156] = f"{sum(block):06o}\x00 ".encode()
    return block


def sparse_bomb(blocks: int) -> bytes:
    """A GNU sparse member whose extension blocks go on and on (the reported attack)."""
    out = io.BytesIO()
    out.write(_header("setup.sh", 0, b"S", {482: b"\x01", 483: b"00000000001\x00"}))
    entry = b"00000000000\x0000000000001\x00"  # offset 0, 1 byte
    for index in range(blocks):
        ext = bytearray(512)
        for slot in range(21):
            ext[slot * 24 : slot * 24 + 24] = entry
        ext[504] = 1 if index < blocks - 1 else 0
        out.write(ext)
    out.write(b"\x00" * 1024)
    return gzip.compress(out.getvalue(), compresslevel=9)


def pax_globals(count: int, size: int) -> bytes:
    out = io.BytesIO()
    record = f"comment={'x' * (size - 20)}\n"
    record = f"{len(record) + len(str(len(record))) + 1} {record}"
    data = record.encode()
    for _ in range(count):
        out.write(_header("pax_global_header", len(data), b"g"))
        out.write(data + b"\x00" * (-len(data) % 512))
    info = tarfile.TarInfo("setup.sh")
    out.write(info.tobuf(format=tarfile.USTAR_FORMAT))
    out.write(b"\x00" * 1024)
    return gzip.compress(out.getvalue())


def test_a_gnu_sparse_member_is_refused_before_its_map_is_read(tmp_path: Path) -> None:
    archive = tmp_path / "entry.tar.gz"
    archive.write_bytes(sparse_bomb(400_000))  # 200 MB of extension blocks in a small upload
    tracemalloc.start()
    started = time.monotonic()
    with pytest.raises(ArchiveError, match="sparse"):
        unpack_entry(archive, tmp_path / "out")
    elapsed, peak = time.monotonic() - started, tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 32 << 20, f"{peak >> 20} MiB"
    assert elapsed < 5  # not a performance target: a guard against parsing the whole map


def test_pax_global_headers_cannot_pile_up_past_the_total_cap(tmp_path: Path) -> None:
    archive = tmp_path / "entry.tar.gz"
    archive.write_bytes(pax_globals(count=12, size=900_000))  # each under the per-header cap
    with pytest.raises(ArchiveError, match="metadata headers"):
        unpack_entry(archive, tmp_path / "out")
