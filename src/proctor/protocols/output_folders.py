"""Output folders reused case after case: one per worker thread, emptied after each case.

A protocol whose cases write into a writable mount of their own (``command``'s ``/output``)
would make every case a configuration of its own if each got a fresh folder, and so a
sandbox launch of its own. Here each worker thread keeps one size-capped folder (a session
workspace) per stage for all its cases, so a thread's cases share one configuration and run
on the session's case server (``SandboxSession.run_case``). The folder is emptied after each
case (nothing of the case runs any more by then: a case's processes are all killed at its
end) and checked empty before the next; its own mode is restored first, since a case may
have taken its rights away. The folders are released by ``close``.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

from proctor.errors import PlatformError
from proctor.sandbox.base import SandboxSession
from proctor.trees import empty_tree


class OutputFolders:
    """The output folders of one job's session: one per worker thread and parent folder."""

    def __init__(self, session: SandboxSession, size_bytes: int) -> None:
        self._session = session
        self._size_bytes = size_bytes
        self._lock = threading.Lock()
        self._stack = contextlib.ExitStack()
        self._folders: dict[tuple[int, Path], Path] = {}
        self._modes: dict[Path, int] = {}  # each folder's own mode, as the workspace made it

    def folder(self, under: Path) -> Path:
        """The calling thread's empty output folder below ``under`` (made on its first use)."""
        key = (threading.get_ident(), under)
        with self._lock:
            known = self._folders.get(key)
            if known is not None:
                return known
            path = under / f".output-{len(self._folders)}"
            under.mkdir(parents=True, exist_ok=True)
            folder = self._stack.enter_context(
                self._session.workspace(path, size_bytes=self._size_bytes)
            )
            self._folders[key] = folder
            self._modes[folder] = os.stat(folder).st_mode & 0o7777
        return folder

    def empty(self, folder: Path) -> None:
        """Remove everything a case left in ``folder`` (links removed, never followed)."""
        with self._lock:
            mode = self._modes.get(folder, 0o700)
        os.chmod(folder, mode)
        empty_tree(folder)
        if any(os.scandir(folder)):
            raise PlatformError(f"the output folder {folder} could not be emptied")

    def close(self) -> None:
        """Release every folder (their workspaces are unmounted and removed)."""
        with self._lock:
            self._folders.clear()
            self._modes.clear()
            self._stack.close()
