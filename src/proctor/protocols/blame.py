"""Whether a run read the participant's upload: the evidence the ``ingestion`` driver adds.

Before the ingestion program runs, every regular file of the upload (the entry's home) gets
access time 0; afterwards a file read (or a new file, as the ``.pyc`` an import of a
participant's module writes) shows a later one. With the stderr rule of
``spec.program_blame``, a failed run that read no file of the upload is the organizer's.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_FILES = 20_000
"""Uploads with more files than this are not watched: no evidence, the entry's failure."""


class UploadReads:
    """Whether a run read any file of the upload in ``home`` (access times, set to 0 first).

    ``start`` before the run, ``read`` after it. Without evidence (too many files, a file
    system that keeps no access times) ``read`` says True: the failure stays the entry's.
    """

    def __init__(self, home: Path) -> None:
        self.home = home
        self.watched = False

    def start(self) -> None:
        """Set every regular file's access time to 0 (links are not followed)."""
        files = _files(self.home)
        if files is None or os.statvfs(self.home).f_flag & os.ST_NOATIME:
            return
        try:
            for path in files:
                info = os.lstat(path)
                os.utime(path, ns=(0, info.st_mtime_ns), follow_symlinks=False)
        except OSError:
            return
        self.watched = True

    def read(self) -> bool:
        """True when a file was read or made (an import's ``.pyc``), or nothing was watched."""
        if not self.watched:
            return True
        files = _files(self.home)
        if files is None:
            return True
        for path in files:
            try:
                if os.lstat(path).st_atime_ns != 0:
                    return True
            except OSError:
                return True
        return False


def _files(home: Path) -> list[str] | None:
    """The regular files below ``home`` (not through links), or None past ``MAX_FILES``."""
    found: list[str] = []
    for folder, dirs, names in os.walk(home, followlinks=False):
        for name in (*names, *dirs):
            path = os.path.join(folder, name)
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    found.append(path)
            except OSError:
                continue
            if len(found) > MAX_FILES:
                return None
    return found
