"""The two digests of an environment.

``declaration_digest``: what was asked for (suite, packages, mirror, the wheel lock's bytes,
added files' bytes, variables, the environment lock's bytes); the store's key, so a changed
declaration builds anew and an unchanged one is a cache hit.
``digest``: what was built, the sha256 of the tree as one canonical uncompressed tar (sorted
paths, owner 0, fixed times): the OCI layer's ``diff_id``, identical in the store, in an
exported image and after an import.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from proctor.spec.environment import EnvironmentSpec

FORMAT = 3
"""Bumped when the way an image is built changes, so old images are not taken for new ones."""


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    if path.is_dir():
        for item in sorted(path.rglob("*")):
            digest.update(str(item.relative_to(path)).encode() + b"\0")
            if item.is_file():
                digest.update(bytes.fromhex(_file_digest(item)))
        return digest.hexdigest()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def declaration_digest(spec: EnvironmentSpec) -> str:
    """The sha256 of everything that determines the built tree."""
    canonical: dict[str, Any] = {
        "format": FORMAT,
        "suite": spec.debian.suite,
        "packages": sorted(spec.debian.packages),
        "mirror": spec.debian.mirror,
        "wheels": _file_digest(spec.python.lock)
        if spec.python is not None and spec.python.lock.is_file()
        else None,
        "files": [(f.target, _file_digest(f.source)) for f in spec.files],
        "variables": sorted(spec.variables.items()),
        "lock": _file_digest(spec.lock) if spec.lock is not None and spec.lock.is_file() else None,
    }
    return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()


def _walk(root: Path) -> Iterator[Path]:
    """Every path below ``root``, sorted, folders before their contents, links not followed."""
    entries = sorted(os.scandir(root), key=lambda e: e.name)
    for entry in entries:
        path = Path(entry.path)
        yield path
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(path)


def _tar_info(path: Path, name: str) -> tarfile.TarInfo:
    info = os.lstat(path)
    member = tarfile.TarInfo(name)
    member.mode = stat.S_IMODE(info.st_mode)
    member.uid = member.gid = 0
    member.uname = member.gname = "root"
    member.mtime = 0
    if stat.S_ISDIR(info.st_mode):
        member.type = tarfile.DIRTYPE
    elif stat.S_ISLNK(info.st_mode):
        member.type, member.linkname = tarfile.SYMTYPE, os.readlink(path)
    elif stat.S_ISREG(info.st_mode):
        member.size = info.st_size
    else:
        member.type = tarfile.FIFOTYPE  # left out by canonical_tar
    return member


class HashingWriter:
    """A write-only stream that hashes what passes through (sha256, bytes) and forwards it."""

    def __init__(self, sink: IO[bytes] | None) -> None:
        self.sink = sink
        self.sha256 = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        self.size += len(data)
        if self.sink is not None:
            self.sink.write(data)
        return len(data)

    def flush(self) -> None:
        """Flush the sink, if any."""
        if self.sink is not None:
            self.sink.flush()


def canonical_tar(root: Path, sink: IO[bytes] | None = None) -> tuple[str, int]:
    """Write the tree at ``root`` as the canonical tar into ``sink``; return (sha256, bytes).

    Device nodes and FIFOs are left out (the sandbox brings its own ``/dev``); hard links are
    stored as copies.
    """
    stream = HashingWriter(sink)
    with tarfile.open(fileobj=stream, mode="w|", format=tarfile.PAX_FORMAT) as tar:  # type: ignore[call-overload]
        for path in _walk(root):
            member = _tar_info(path, str(path.relative_to(root)))
            if member.isreg():
                with path.open("rb") as handle:
                    tar.addfile(member, handle)
            elif member.isdir() or member.issym():
                tar.addfile(member)
    return stream.sha256.hexdigest(), stream.size
