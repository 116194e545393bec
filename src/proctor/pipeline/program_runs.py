"""Run an organizer's program (a scoring program, an output check) in the sandbox.

The seam between ``scoring`` (which builds a ``ProgramRequest`` and judges its result, but never
touches the sandbox) and ``sandbox`` (which knows nothing of challenges). A runner is what
``scoring`` is handed: the session an output check runs in is the job's own; a scoring program
gets a session (a slot) of its own (``pipeline.program_exec`` makes the run), and with a
program ``beside`` it, both run at once in a session each (``pipeline.program_pairs``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path

from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.program_exec import run_program
from proctor.pipeline.program_pairs import run_pair
from proctor.sandbox.base import Sandbox, SandboxSession
from proctor.sandbox.rootfs import RootFilesystem
from proctor.spec.programs import ProgramRequest, ProgramResult

__all__ = ["SandboxProgramRunner", "SessionProgramRunner", "run_program"]


class SessionProgramRunner:
    """Runs programs in a session the caller holds (output checks during a job's stages)."""

    def __init__(
        self, session: SandboxSession, scratch: Path, variables: Mapping[str, str] | None = None
    ) -> None:
        self.session = session
        self.scratch = scratch
        self.variables = dict(variables or {})

    def __call__(self, request: ProgramRequest) -> ProgramResult:
        """Run ``request`` in the held session (one program: never a pair)."""
        if request.beside is not None:
            raise ValueError("a pair of programs needs a session each: use SandboxProgramRunner")
        return run_program(self.session, request, self.scratch, self.variables)


class SandboxProgramRunner:
    """Runs each program in a session of its own: a fresh slot, ``root`` as its filesystem.

    ``variables``: the environment's declared variables (the request's own win); ``cancel``:
    the job's token, which kills a program under way. A request with a ``beside`` program
    runs both at once, each in a session of its own (``pipeline.program_pairs``).
    """

    def __init__(
        self,
        sandbox: Sandbox,
        scratch: Path,
        root: RootFilesystem | None = None,
        variables: Mapping[str, str] | None = None,
        cancel: CancelToken | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.scratch = scratch
        self.root = root
        self.variables = dict(variables or {})
        self.cancel = cancel

    def session(self) -> contextlib.AbstractContextManager[SandboxSession]:
        """A session of its own for one program (cancelled with the job)."""
        return _listening(self.sandbox.session(self.root), self.cancel)

    def __call__(self, request: ProgramRequest) -> ProgramResult:
        """Claim a slot, run ``request`` in it, release the slot."""
        if request.beside is not None:
            return run_pair(self.session, request, self.scratch, self.variables)
        with self.session() as session:
            return run_program(session, request, self.scratch, self.variables)


@contextlib.contextmanager
def _listening(
    sessions: contextlib.AbstractContextManager[SandboxSession], cancel: CancelToken | None
) -> Iterator[SandboxSession]:
    with sessions as session:
        listening = cancel.listening(session.cancel) if cancel else contextlib.nullcontext()
        with listening:
            yield session
