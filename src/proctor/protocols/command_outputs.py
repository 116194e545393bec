"""The files a ``command`` entry wrote for one case: named by the convention, on the input's grid.

VISCERAL's output convention is ``CASE_RADLEXID_PARTICIPANT_1.nii.gz`` in the output folder,
one file per organ the program segments; an organ it does not segment has no file (not an
error). Trusted host code lists the folder without following links, matches every name, copies
each file out through :func:`proctor.protocols.outputs.collect_output_to` and checks it against
the case's input volume (:func:`proctor.formats.nifti_masks.mask_problem`). Any wrong file makes
the case an error naming that file; the stored folder then holds nothing.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from string import Formatter

from proctor.formats.nifti_masks import Grid, mask_problem
from proctor.protocols.outputs import collect_output_to

STORED_SUFFIX = ".nii.gz"
"""A stored organ file is ``TASKID.nii.gz`` inside the case's stored folder."""

_GROUPS = {
    "case": None,
    "task_id": r"(?P<task_id>[A-Za-z0-9]+)",
    "participant": r"(?P<participant>[A-Za-z0-9-]+)",
}


def name_pattern(pattern: str, case: str) -> re.Pattern[str]:
    """The regular expression of ``pattern`` (``{case}_{task_id}_{participant}_1.nii.gz``)."""
    parts = []
    for literal, field, _, _ in Formatter().parse(pattern):
        parts.append(re.escape(literal))
        if field is not None:
            parts.append(re.escape(case) if field == "case" else str(_GROUPS[field]))
    return re.compile("".join(parts))


@dataclass(frozen=True, slots=True)
class CollectedCase:
    """The organ files taken out of one case's output folder (by task id), or the problem."""

    task_ids: tuple[str, ...]
    problem: str = ""


def _shown(pattern: str, case: str) -> str:
    return pattern.format(case=case, task_id="RADLEXID", participant="PARTICIPANT")


def match_names(
    folder: Path, *, pattern: str, case: str, asked: tuple[str, ...]
) -> dict[str, str] | str:
    """Task id → file name of every file in ``folder``, or what is wrong with the first bad one."""
    regex, found = name_pattern(pattern, case), dict[str, str]()
    with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    for entry in entries:
        mode = entry.stat(follow_symlinks=False).st_mode
        if not stat.S_ISREG(mode):
            return f"{entry.name}: not a regular file; write one regular file per organ"
        matched = regex.fullmatch(entry.name)
        if matched is None:
            return f"{entry.name}: not named {_shown(pattern, case)}"
        task_id = matched["task_id"]
        if task_id not in asked:
            return f"{entry.name}: ID {task_id} was not asked for (asked: {' '.join(asked)})"
        if task_id in found:
            return f"{entry.name}: a second file for ID {task_id} (first: {found[task_id]})"
        found[task_id] = entry.name
    return found


def collect_case(
    folder: Path, store: Path, *, names: dict[str, str], grid: Grid, max_bytes: int
) -> CollectedCase:
    """Copy each named file to ``store/TASKID.nii.gz`` and check it against the input's grid.

    ``max_bytes``: the output folder's cap, for all the files together in apparent size
    (holes count in full), checked before any is copied. On the first refused or invalid
    file ``store`` is emptied and the problem returned.
    """
    over = _past_cap(folder, sorted(names.values()), max_bytes)
    if over is not None:
        return CollectedCase((), over)
    store.mkdir(parents=True, exist_ok=True)
    left = max_bytes
    for task_id, name in sorted(names.items()):
        target = store / f"{task_id}{STORED_SUFFIX}"
        problem = collect_output_to(folder, name, target, max_bytes=left)
        if problem is None:
            left -= target.stat().st_size
            found = mask_problem(target, grid)
            problem = None if found is None else f"{name}: {found}"
        if problem is not None:
            shutil.rmtree(store, ignore_errors=True)
            return CollectedCase((), problem)
    return CollectedCase(tuple(sorted(names)))


def _past_cap(folder: Path, names: list[str], max_bytes: int) -> str | None:
    """What takes the files ``names`` of ``folder`` past ``max_bytes`` together, or None."""
    total = 0
    for name in names:
        try:
            size = os.lstat(folder / name).st_size
        except OSError:  # gone: the copy says so
            continue
        total += size
        if total > max_bytes:
            return (
                f"{name}: {size} bytes (apparent size: holes count in full) take the files to "
                f"{total} bytes, past the output folder's cap of {max_bytes} bytes: write less"
            )
    return None


def same_folders(first: Path, second: Path) -> bool:
    """True when two stored case folders hold the same files with the same bytes."""
    if not (first.is_dir() and second.is_dir()):
        return False
    names = sorted(path.name for path in first.iterdir())
    if names != sorted(path.name for path in second.iterdir()):
        return False
    return all(_content(first / name) == _content(second / name) for name in names)


def _content(path: Path) -> bytes:
    """A file's bytes, decompressed when gzip'd (a gzip header carries a time stamp)."""
    data = path.read_bytes()
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError):
        return data
