"""Collect an entry's declared output files safely (the *validate* role of specs/sandbox.md).

Trusted host code reads only the files a protocol declares: regular files only, never through a
symbolic link, size-capped, and never unpickled. A FIFO cannot make the reader hang because the
file is opened with ``O_NONBLOCK`` and checked with ``fstat`` before a byte is read.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from string import Formatter


def check_record_template(template: str) -> str:
    """A plain relative file: one per record (only ``{record}`` fields) or one shared file.

    A shared file (no field at all) is the 2015-2017 ``answers.txt``, one line per record.
    """
    fields = [name for _, name, _, _ in Formatter().parse(template) if name is not None]
    if any(name != "record" for name in fields):
        raise ValueError(
            f"{template!r} must name each record's own file with {{record}} (or one shared "
            "file, with no field) and no other field"
        )
    rendered = Path(template.format(record="r"))
    if rendered.is_absolute() or ".." in rendered.parts:
        raise ValueError(f"{template!r} must be a plain relative path inside the entry's home")
    return template


@dataclass(frozen=True, slots=True)
class CollectedOutput:
    """The bytes of one output file, or why it was refused (``data`` is None then)."""

    name: str
    data: bytes | None
    problem: str = ""


class _RefusedError(Exception):
    """Why a declared file was not taken (a message for the participant)."""


@contextlib.contextmanager
def _regular_file(folder: Path, name: str, max_bytes: int, missing: str) -> Iterator[int]:
    """An open descriptor of ``folder/name``, or ``_RefusedError`` saying why not.

    Taken: a plain relative name, no symbolic link on the way, a regular file of at most
    ``max_bytes``.
    """
    parts = Path(name).parts
    if not parts or Path(name).is_absolute() or ".." in parts:
        raise _RefusedError(f"{name}: names must be plain relative paths")
    try:
        fd = _open_beneath(folder, parts)
    except FileNotFoundError:
        raise _RefusedError(f"{name}: {missing}") from None
    except OSError as exc:
        raise _RefusedError(f"{name}: refused ({_reason(exc)})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _RefusedError(f"{name}: not a regular file")
        if info.st_size > max_bytes:
            raise _RefusedError(f"{name}: {info.st_size} bytes is over the {max_bytes}-byte limit")
        yield fd
    finally:
        os.close(fd)


def collect_output(folder: Path, name: str, *, max_bytes: int) -> CollectedOutput:
    """Read ``folder/name`` if it is a regular file of at most ``max_bytes`` bytes.

    ``name`` must be a plain relative path (no ``..``); a symlink anywhere on the way, a FIFO, a
    device or a folder is refused with a reason the participant can act on.
    """
    try:
        with (
            _regular_file(folder, name, max_bytes, "the entry wrote no such file") as fd,
            os.fdopen(fd, "rb", closefd=False) as handle,
        ):
            data = handle.read(max_bytes + 1)
    except _RefusedError as refused:
        return CollectedOutput(name, None, str(refused))
    if len(data) > max_bytes:
        return CollectedOutput(name, None, f"{name}: over the {max_bytes}-byte limit")
    return CollectedOutput(name, data)


COPY_CHUNK = 1 << 20


def checked_file(folder: Path, name: str, *, max_bytes: int) -> Path | str:
    """``folder/name`` when it is a safe regular file of at most ``max_bytes``, else why not.

    Safe: reached without symbolic links. For files the entry ships, read later by the host.
    """
    try:
        with _regular_file(folder, name, max_bytes, "no such file"):
            return folder.joinpath(*Path(name).parts)
    except _RefusedError as refused:
        return str(refused)


def collect_output_to(folder: Path, name: str, dest: Path, *, max_bytes: int) -> str | None:
    """Copy ``folder/name`` to ``dest`` in chunks (never whole in memory); None, or why not.

    The same checks as :func:`collect_output`: a plain relative name, no symlink on the way, a
    regular file of at most ``max_bytes``. A refused or oversized file leaves no ``dest``.
    """
    try:
        with _regular_file(folder, name, max_bytes, "the entry wrote no such file") as fd:
            dest.parent.mkdir(parents=True, exist_ok=True)
            copied = 0
            with dest.open("wb") as out:
                while chunk := os.read(fd, COPY_CHUNK):
                    copied += len(chunk)
                    if copied > max_bytes:
                        break
                    out.write(chunk)
    except _RefusedError as refused:
        return str(refused)
    if copied > max_bytes:
        dest.unlink()
        return f"{name}: over the {max_bytes}-byte limit"
    return None


def _open_beneath(folder: Path, parts: tuple[str, ...]) -> int:
    """Open ``folder/parts...`` refusing symlinks at every step (``O_NOFOLLOW`` per component)."""
    flags_dir = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    current = os.open(folder, flags_dir)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, flags_dir, dir_fd=current)
            os.close(current)
            current = nxt
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
        return os.open(parts[-1], flags, dir_fd=current)
    finally:
        os.close(current)


def _reason(exc: OSError) -> str:
    if exc.errno in {getattr(os, "ELOOP", 40), 40}:
        return "it is a symbolic link; write a regular file"
    return exc.strerror or str(exc)


def remove_output(folder: Path, name: str) -> None:
    """Delete a collected output from the entry's home so the next case cannot see it.

    The folders on the way are opened without following symbolic links, so a link planted by
    the entry cannot make the host delete a file outside the home.
    """
    parts = Path(name).parts
    if not parts or Path(name).is_absolute() or ".." in parts:
        return
    flags_dir = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        current = os.open(folder, flags_dir)
    except OSError:
        return
    try:
        for part in parts[:-1]:
            nxt = os.open(part, flags_dir, dir_fd=current)
            os.close(current)
            current = nxt
        if not stat.S_ISDIR(os.stat(parts[-1], dir_fd=current, follow_symlinks=False).st_mode):
            os.unlink(parts[-1], dir_fd=current)
    except OSError:
        pass
    finally:
        os.close(current)
