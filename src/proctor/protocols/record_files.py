"""A record's files in the current working directory of ``next.sh``, as PhysioNet's VM had them.

The 2017 and 2018 sample entries read ``RECORD.hea`` and ``RECORD.mat`` from their working
directory, which is also the entry's home. The inputs stay on their read-only mount (``/data``);
before a case the host puts symbolic links to that record's files in the home (in-sandbox
targets, ``/data/RECORD.mat``), and removes them after, so a case sees its own record in the
current directory. Cases running at once share the home and so see each other's links too:
files of records the entry may read in ``/data`` anyway.
The links point inside the sandbox only: host code never follows links in a home (outputs are
collected with ``O_NOFOLLOW``), and a backend without mount namespaces (``process``) cannot
resolve them, so entries there read ``$PROCTOR_DATA``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REFERENCE_SUFFIX = "-arousal.mat"
"""A training record's label file (2018), shown with the record like its signals."""


def record_of(name: str) -> str:
    """The record a file belongs to: ``tr01-0001`` of ``tr01-0001.mat`` or ``…-arousal.mat``."""
    if name.endswith(REFERENCE_SUFFIX):
        return name[: -len(REFERENCE_SUFFIX)]
    return name.split(".", 1)[0]


class RecordFiles:
    """The files of every record of the input folders a driver has seen, listed once each."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._folders: dict[Path, dict[str, tuple[str, ...]]] = {}

    def of(self, folder: Path, record: str) -> tuple[str, ...]:
        """Names of ``record``'s files in ``folder`` (``RECORD.*``, ``RECORD-arousal.mat``)."""
        with self._lock:
            listing = self._folders.get(folder)
            if listing is None:
                listing = self._folders[folder] = _list(folder)
        return listing.get(record, ())


def _list(folder: Path) -> dict[str, tuple[str, ...]]:
    grouped: dict[str, list[str]] = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_file(follow_symlinks=False) and entry.name != "RECORDS":
                grouped.setdefault(record_of(entry.name), []).append(entry.name)
    return {record: tuple(sorted(names)) for record, names in grouped.items()}


@contextmanager
def linked_into(home: Path, names: tuple[str, ...], mount: str) -> Iterator[None]:
    """Links ``home/NAME`` → ``mount/NAME`` for the duration of one case.

    A name the entry already uses is left alone (its own file wins). Afterwards only links
    that still point where this function made them point are removed.
    """
    made = []
    for name in names:
        target = f"{mount}/{name}"
        try:
            os.symlink(target, home / name)
        except OSError:
            continue
        made.append((name, target))
    try:
        yield
    finally:
        for name, target in made:
            try:
                if os.readlink(home / name) == target:
                    os.unlink(home / name)
            except OSError:
                pass
