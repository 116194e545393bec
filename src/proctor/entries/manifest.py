"""Checking that an unpacked entry holds the files its challenge requires.

PhysioNet's prep stage refused an entry whose required files were missing or empty; we do the
same, report every problem at once (a participant should not learn them one upload at a time),
and also report scripts that lack their executable bit. Only ``lstat`` is used: cheap, and it
never follows a link. A path ending in ``/`` names a required folder (2014's ``sources/``).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from proctor.errors import ManifestError

DRY_RUN_FILE = "DRYRUN"
CLOSED_SOURCE_FILE = "CLOSEDSOURCE.txt"


@dataclass(frozen=True)
class Manifest:
    """The files an entry must (``required``) or may (``optional``) hold, relative to its root.

    Files in ``executable`` must exist and carry an executable bit; they need not be repeated
    in ``required``. A path ending in ``/`` is a folder that must exist and not be empty.
    """

    required: tuple[str, ...]
    executable: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for field_name in ("required", "executable", "optional"):
            paths = getattr(self, field_name)
            if isinstance(paths, str):
                raise TypeError(f"Manifest.{field_name} must be a tuple of paths, not {paths!r}")
            for path in paths:
                _check_manifest_path(field_name, path)

    def root_names(self) -> frozenset[str]:
        """The names the manifest expects at an entry's top level (``test/`` → ``test``)."""
        paths = (*self.required, *self.executable, *self.optional)
        return frozenset(path.split("/", 1)[0] for path in paths) | {DRY_RUN_FILE}


@dataclass(frozen=True)
class EntryFlags:
    """Markers an entry may carry: ``DRYRUN`` (stop after quiz) and ``CLOSEDSOURCE.txt``."""

    dry_run: bool
    closed_source: bool


def check_manifest(root: Path, manifest: Manifest) -> list[str]:
    """Check the entry at ``root`` against ``manifest``; return warnings for optional files.

    Raises ``ManifestError`` listing every problem at once: required files missing, empty,
    folders where files belong (or the reverse), and scripts that are not executable.
    """
    problems: list[str] = []
    for path in dict.fromkeys(manifest.required + manifest.executable):
        problems += _problems(root, path, executable=path in manifest.executable)
    if len(problems) == 1:
        raise ManifestError(problems[0])
    if problems:
        listing = "\n".join(f"  - {problem}" for problem in problems)
        raise ManifestError(f"the entry has {len(problems)} problems:\n{listing}")
    warnings: list[str] = []
    for path in manifest.optional:
        if _lstat(root, path) is None:
            warnings.append(f"entry has no {path} (optional)")
        else:
            warnings += _problems(root, path, executable=False, may_be_empty=True)
    return warnings


def entry_flags(root: Path) -> EntryFlags:
    """Read the entry's markers: a regular file ``DRYRUN`` / ``CLOSEDSOURCE.txt`` at ``root``."""
    return EntryFlags(
        dry_run=_is_file(root, DRY_RUN_FILE), closed_source=_is_file(root, CLOSED_SOURCE_FILE)
    )


def _problems(root: Path, path: str, *, executable: bool, may_be_empty: bool = False) -> list[str]:
    """Everything wrong with ``path`` below ``root`` (an empty list when all is well)."""
    name = path.rstrip("/")
    info = _lstat(root, path)
    if info is None:
        where = "at the top level of the archive" if "/" not in name else f"as {name}"
        return [f"entry is missing {path}: add it {where}{_hint(root, name)}"]
    if stat.S_ISLNK(info.st_mode):
        return [f"{name} is a symbolic link: replace it with the file it points to"]
    if path.endswith("/"):
        return _folder_problems(root, path, info, may_be_empty=may_be_empty)
    return _file_problems(name, info, executable=executable, may_be_empty=may_be_empty)


def _folder_problems(
    root: Path, path: str, info: os.stat_result, *, may_be_empty: bool
) -> list[str]:
    name = path.rstrip("/")
    if not stat.S_ISDIR(info.st_mode):
        return [f"{name} is a file, but it must be a folder: put the folder {path} there"]
    with os.scandir(root / name) as children:
        if may_be_empty or next(children, None) is not None:
            return []
    return [f"{path} is empty: put the files it must hold in it"]


def _file_problems(
    name: str, info: os.stat_result, *, executable: bool, may_be_empty: bool
) -> list[str]:
    if stat.S_ISDIR(info.st_mode):
        return [f"{name} is a folder, but it must be a file: put the file {name} there"]
    if not stat.S_ISREG(info.st_mode):
        return [f"{name} is not a regular file: replace it with one"]
    found = []
    if info.st_size == 0 and not may_be_empty:
        found.append(f"{name} is empty: give it its content before archiving")
    if executable and not info.st_mode & 0o111:
        found.append(f"{name} is not executable: run `chmod +x {name}` before archiving")
    return found


def _lstat(root: Path, path: str) -> os.stat_result | None:
    try:
        return os.lstat(root / path.rstrip("/"))
    except (FileNotFoundError, NotADirectoryError):
        return None


def _hint(root: Path, name: str) -> str:
    """A pointer to a near miss: a name differing in case, or the file one folder down."""
    target = PurePosixPath(name)
    parent = root / target.parent
    try:
        siblings = os.listdir(parent)
    except OSError:
        return ""
    for sibling in sorted(siblings):
        if sibling.lower() == target.name.lower():
            return f" (found {sibling}: names are case-sensitive)"
    for sibling in sorted(siblings):
        if _is_dir(parent, sibling) and _lstat(parent / sibling, target.name) is not None:
            return f" (found {sibling}/{target.name}: archive the files, not their folder)"
    return ""


def _is_file(root: Path, name: str) -> bool:
    info = _lstat(root, name)
    return info is not None and stat.S_ISREG(info.st_mode)


def _is_dir(root: Path, name: str) -> bool:
    info = _lstat(root, name)
    return info is not None and stat.S_ISDIR(info.st_mode)


def _check_manifest_path(field_name: str, path: str) -> None:
    """Refuse manifest paths that could not name a file inside an entry."""
    parts = PurePosixPath(path).parts
    if not path or path.startswith("/") or "\\" in path or ".." in parts:
        raise ValueError(
            f"Manifest.{field_name} holds {path!r}: use a relative path inside the entry, "
            "with '/' separators and no '..'"
        )


def set_executable_bits(root: Path, paths: tuple[str, ...]) -> list[str]:
    """Give the listed regular files the executable bits they lack; return those changed.

    Archives made on Windows carry no executable bits. Links are never followed (``lstat``),
    and only files directly named by the protocol are touched.
    """
    changed = []
    for name in paths:
        target = root / name
        try:
            info = os.lstat(target)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and not info.st_mode & stat.S_IXUSR:
            exec_bits = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
            os.chmod(target, stat.S_IMODE(info.st_mode) | exec_bits)  # a regular file (lstat)
            changed.append(name)
    return sorted(changed)
