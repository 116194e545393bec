"""Sessions built from two backend primitives: holding a slot and running as part of a group.

A ``SessionSandbox`` backend implements ``hold_slot`` (claim a slot no other session holds),
``run_in_group`` (one run as a member of a ``RunGroup``) and ``workspace`` (a capped folder a
slot may write). Each session gets a slot and a group of its own, so cancelling one session
kills only its runs; ``cancel_all`` reaches every group.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from abc import abstractmethod
from collections.abc import Iterator
from pathlib import Path

from proctor.errors import UsageError
from proctor.sandbox.base import CANCELLED, Outcome, RunSpec, Sandbox, SandboxSession
from proctor.sandbox.case_pool import CasePool
from proctor.sandbox.rootfs import AttachedRoot, RootFilesystem, attach_root
from proctor.sandbox.runs import RunGroup
from proctor.sandbox.views import MountViews


class SessionSandbox(Sandbox):
    """A backend whose sessions are a held slot plus a run group."""

    def __init__(self) -> None:
        self._groups_lock = threading.Lock()
        self._session_runs: set[RunGroup] = set()

    @abstractmethod
    def hold_slot(self) -> contextlib.AbstractContextManager[int]:
        """Claim a free slot for the duration of the block (``PlatformError`` if none is)."""

    @abstractmethod
    def run_in_group(
        self, runs: RunGroup, spec: RunSpec, *, slot: int, root_dir: Path | None = None
    ) -> Outcome:
        """Run ``spec`` as ``slot`` and as a member of ``runs``, and wait for it.

        Returns ``CANCELLED`` without starting anything when ``runs`` is cancelled already;
        registers the run with ``runs.join`` as soon as it can be killed.
        """

    @abstractmethod
    def workspace(
        self, path: Path, *, size_bytes: int, slot: int
    ) -> contextlib.AbstractContextManager[Path]:
        """A size-capped writable folder at ``path`` that runs of ``slot`` may write."""

    def give_to_slot(self, path: Path, slot: int) -> None:
        """Make host files under ``path`` (copied in by the host) writable by runs of ``slot``.

        Backends without per-slot identities leave the files as they are.
        """

    def attach_root(
        self, root: RootFilesystem, slot: int
    ) -> contextlib.AbstractContextManager[AttachedRoot]:
        """Make ``root`` available to one session (a backend may mount it privately)."""
        return attach_root(root, is_root=False, under=Path("/"), tag=str(slot))

    def mount_views(self, slot: int) -> contextlib.AbstractContextManager[MountViews]:
        """What one session's runs bind for their mounts (a backend may show private copies)."""
        return contextlib.nullcontext(MountViews())

    def case_pool(self, slot: int, runs: RunGroup, root_dir: Path | None) -> CasePool | None:
        """Case servers for one session (None: every case is a sandbox of its own)."""
        return None

    @contextlib.contextmanager
    def session(self, root: RootFilesystem | None = None) -> Iterator[SandboxSession]:
        """Hold a free slot and a run group of its own; leaving cancels what still runs."""
        with contextlib.ExitStack() as stack:
            slot = stack.enter_context(self.hold_slot())
            attached = stack.enter_context(self.attach_root(root, slot)) if root else None
            views = stack.enter_context(self.mount_views(slot))
            runs = RunGroup()
            with self._groups_lock:
                self._session_runs.add(runs)
            pool = self.case_pool(slot, runs, attached.folder if attached else None)
            try:
                yield GroupSession(self, slot, runs, attached, views=views, pool=pool)
            finally:
                runs.cancel()  # a run still going would outlive the slot it holds
                if pool is not None:
                    pool.close()
                with self._groups_lock:
                    self._session_runs.discard(runs)

    def run_interactive(self, spec: RunSpec, *, slot: int, root_dir: Path | None = None) -> Outcome:
        """Run ``spec`` attached to this terminal; backends that cannot, refuse."""
        raise UsageError(f"the {self.name} sandbox cannot open an interactive shell: use bwrap")

    def cancel_all(self) -> None:
        """Kill every run under way now, in every session and outside them."""
        with self._groups_lock:
            groups = list(self._session_runs)
        for runs in groups:
            runs.kill_running()


class GroupSession(SandboxSession):
    """One session of a ``SessionSandbox``: its slot and its run group."""

    def __init__(
        self,
        sandbox: SessionSandbox,
        slot: int,
        runs: RunGroup,
        root: AttachedRoot | None = None,
        *,
        views: MountViews | None = None,
        pool: CasePool | None = None,
    ) -> None:
        self.slot = slot
        self._sandbox = sandbox
        self._runs = runs
        self._root = root
        self._views = views or MountViews()
        self._pool = pool
        self.private_root = root is not None and root.private

    def run(self, spec: RunSpec) -> Outcome:
        """Run ``spec`` as this session's slot; ``CANCELLED`` at once after ``cancel()``."""
        if self._runs.cancelled:
            return CANCELLED
        return self._sandbox.run_in_group(
            self._runs, self._viewed(spec), slot=self.slot, root_dir=self._root_dir()
        )

    def run_case(self, spec: RunSpec) -> Outcome:
        """Run one of many similar short runs, on a case server when the backend has them."""
        if self._pool is None or spec.root_tree is not None:
            return self.run(spec)
        if self._runs.cancelled:
            return CANCELLED
        # the same private views a run of its own binds
        return self._pool.run(self._viewed(spec), fallback=lambda: self.run(spec))

    def run_interactive(self, spec: RunSpec) -> Outcome:
        """Run ``spec`` attached to this terminal (for people, never for entries under test)."""
        return self._sandbox.run_interactive(
            self._viewed(spec), slot=self.slot, root_dir=self._root_dir()
        )

    def _viewed(self, spec: RunSpec) -> RunSpec:
        """``spec`` with its read-only mounts shown through this session's views."""
        return dataclasses.replace(spec, mounts=self._views.view(spec.mounts))

    def _root_dir(self) -> Path | None:
        return self._root.folder if self._root is not None else None

    def workspace(self, path: Path, *, size_bytes: int) -> contextlib.AbstractContextManager[Path]:
        """The backend's workspace for this session's slot."""
        return self._sandbox.workspace(path, size_bytes=size_bytes, slot=self.slot)

    def give(self, path: Path) -> None:
        """Hand ``path`` to this session's slot (``SessionSandbox.give_to_slot``)."""
        self._sandbox.give_to_slot(path, self.slot)

    def cancel(self) -> None:
        """Kill this session's runs, now and from now on."""
        self._runs.cancel()

    @property
    def cancelled(self) -> bool:
        """True once ``cancel()`` was called or the session was left."""
        return self._runs.cancelled
