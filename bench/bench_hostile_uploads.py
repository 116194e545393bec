"""Worker memory while handling the hostile uploads the hardening issue reported.

Run: ``python bench/bench_hostile_uploads.py``. Each case runs in a fresh Python process that
reports its own peak resident memory (``VmHWM``, interpreter and numpy included), against the
target of 256 MiB:

- a GNU sparse tar whose extension blocks go on and on (a small .tar.gz upload);
- pax global headers piled up, each under the per-header cap;
- a quiz comparison against a 64 MiB shipped answer of short lines;
- eight 60 MiB exam outputs collected into the run folder.
"""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MIB = 256


def _header(name: str, size: int, kind: bytes, extra: dict[int, bytes] | None = None) -> bytes:
    block = bytearray(512)
    block[0 : len(name)] = name.encode()
    block[100:108] = b"0000644\x00"
    block[108:116] = block[116:124] = b"0000000\x00"
    block[124:136] = f"{size:011o}\x00".encode()
    block[136:148] = b"00000000000\x00"
    block[156:157] = kind
    block[257:265] = b"ustar  \x00"
    for offset, data in (extra or {}).items():
        block[offset : offset + len(data)] = data
    block[148:156] = b"        "
    block[148:156] = f"{sum(block):06o}\x00 ".encode()
    return bytes(block)


def sparse_bomb(path: Path, blocks: int = 400_000) -> None:
    out = io.BytesIO()
    out.write(_header("setup.sh", 0, b"S", {482: b"\x01", 483: b"00000000001\x00"}))
    ext = bytearray(512)
    for slot in range(21):
        ext[slot * 24 : slot * 24 + 24] = b"00000000000\x0000000000001\x00"
    ext[504] = 1
    for _ in range(blocks):
        out.write(ext)
    out.write(b"\x00" * 1024)
    path.write_bytes(gzip.compress(out.getvalue(), compresslevel=9))


def pax_pile(path: Path, count: int = 64, size: int = 900_000) -> None:
    record = f"comment={'x' * (size - 20)}\n"
    data = f"{len(record) + len(str(len(record))) + 1} {record}".encode()
    out = io.BytesIO()
    for _ in range(count):
        out.write(_header("pax_global_header", len(data), b"g"))
        out.write(data + b"\x00" * (-len(data) % 512))
    out.write(b"\x00" * 1024)
    path.write_bytes(gzip.compress(out.getvalue()))


CASES = {
    "sparse tar bomb": (
        sparse_bomb,
        "from proctor.entries import unpack_entry\n"
        "try:\n    unpack_entry(SOURCE, TMP / 'out')\nexcept Exception as e:\n    print(e)\n",
    ),
    "pax global pile": (
        pax_pile,
        "from proctor.entries import unpack_entry\n"
        "try:\n    unpack_entry(SOURCE, TMP / 'out')\nexcept Exception as e:\n    print(e)\n",
    ),
    "64 MiB answer of short lines": (
        lambda p: (
            p.write_bytes(b"0\n" * (32 << 20)),
            (p.parent / "out").write_bytes(b"0\n" * (32 << 20)),
        ),
        "from proctor.protocols.compare import compare_files\n"
        "from proctor.protocols.compare import CompareSpec\n"
        "print(compare_files(TMP / 'out', SOURCE, CompareSpec(kind='numeric')))\n",
    ),
    "eight 60 MiB outputs": (
        lambda p: [(p.parent / f"r{i}.vec").write_bytes(b"0.500\n" * (10 << 20)) for i in range(8)],
        "from proctor.protocols.outputs import collect_output_to\n"
        "for i in range(8):\n"
        "    collect_output_to(TMP, f'r{i}.vec', TMP / 'kept' / f'r{i}.vec', max_bytes=1 << 30)\n",
    ),
}


def main() -> int:
    """Run every case in its own process; print its peak memory and the verdict."""
    met = True
    for name, (make, code) in CASES.items():
        with tempfile.TemporaryDirectory(prefix="proctor-hostile-") as scratch:
            tmp = Path(scratch)
            source = tmp / "upload.tar.gz"
            make(source)
            script = (
                "import re\nfrom pathlib import Path\n"
                f"TMP = Path({str(tmp)!r})\nSOURCE = Path({str(source)!r})\n{code}"
                "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
            )
            started = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-c", script], capture_output=True, text=True, check=True
            )
            seconds = time.monotonic() - started
        peak_mib = int(done.stdout.split()[-1]) / 1024
        met &= peak_mib < TARGET_MIB
        print(f"{name:<30} peak {peak_mib:6.1f} MiB in {seconds:5.1f} s   "
              f"{done.stdout.splitlines()[0][:70]}")  # fmt: skip
    print(f"target worker memory < {TARGET_MIB} MiB for every case: {'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
