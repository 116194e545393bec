"""Two organizer programs at once, each in a sandbox of its own, sharing one folder.

Codabench's ``ingestion_only_during_scoring`` runs the ingestion program (the participant's
code) beside the scoring program; they talk through ``/app/shared``. Here each gets a session
of its own (its own slot uid and mount namespace; the references are among the scoring
program's folders only) and the only folder both see is a capped workspace opened to both
slots (``sandbox.workspace.open_to_every_run``). The clock:

- both start together with the same limit; when one runs out of time, the other is given
  ``TIMEOUT_GRACE_S`` to end, then killed (it ran as long as the limit: timed out too);
- when the main program ends within its limit, the one beside it may go on for
  ``BESIDE_GRACE_S`` and is then killed (``stopped``: it had nothing left to talk to);
- the job's cancel kills both (each session listens to it).

Leaving returns both slots: nothing of either run is left on the host.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import tempfile
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from proctor.pipeline.program_exec import run_program
from proctor.sandbox.base import SandboxSession
from proctor.sandbox.workspace import open_to_every_run
from proctor.spec.programs import BESIDE_GRACE_S, ProgramRequest, ProgramResult

TIMEOUT_GRACE_S = 2.0
"""Seconds the other program may take to reach its own limit once one timed out."""

OpenSession = Callable[[], contextlib.AbstractContextManager[SandboxSession]]


def run_pair(
    open_session: OpenSession,
    request: ProgramRequest,
    scratch: Path,
    variables: Mapping[str, str],
) -> ProgramResult:
    """Run ``request`` and ``request.beside`` at once; the main result, ``beside`` filled in."""
    beside = request.beside
    if beside is None or request.shared is None or beside.shared is None:
        raise ValueError("a pair of programs needs a program beside and a shared folder each")
    scratch.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        main = stack.enter_context(open_session())
        other = stack.enter_context(open_session())
        place = Path(tempfile.mkdtemp(prefix="shared-", dir=scratch))
        place.chmod(0o711)
        stack.callback(shutil.rmtree, place, ignore_errors=True)
        size = request.limits.shared_bytes
        shared = stack.enter_context(main.workspace(place / "shared", size_bytes=size))
        open_to_every_run(shared)
        alone = dataclasses.replace(request, beside=None)
        return _race((main, alone), (other, beside), scratch, variables, shared)


def _race(
    first: tuple[SandboxSession, ProgramRequest],
    second: tuple[SandboxSession, ProgramRequest],
    scratch: Path,
    variables: Mapping[str, str],
    shared: Path,
) -> ProgramResult:
    """Run both; stop the one beside when the main one ends, both when one times out."""
    sessions = (first[0], second[0])
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="program") as pool:
        main, other = (
            pool.submit(run_program, session, request, scratch, variables, shared)
            for session, request in (first, second)
        )
        try:
            stopped, late = _watch(main, other, sessions)
            main_result, other_result = main.result(), other.result()
        except BaseException:
            for session in sessions:
                session.cancel()
            raise
    if late is main:
        main_result = dataclasses.replace(main_result, timed_out=True)
    if late is other:
        other_result = dataclasses.replace(other_result, timed_out=True)
    return dataclasses.replace(
        main_result, beside=dataclasses.replace(other_result, stopped=stopped)
    )


def _watch(
    main: Future[ProgramResult],
    other: Future[ProgramResult],
    sessions: tuple[SandboxSession, SandboxSession],
) -> tuple[bool, Future[ProgramResult] | None]:
    """Wait for the pair; (whether ``other`` was stopped, the run killed at the limit or None)."""
    done, _ = wait([main, other], return_when=FIRST_COMPLETED)
    ended = main if main in done else other
    waiting, session = (other, sessions[1]) if ended is main else (main, sessions[0])
    if ended.result().timed_out:
        return False, _kill_after(waiting, session, TIMEOUT_GRACE_S)
    if ended is other:
        wait([main])
        return False, None
    return _kill_after(other, sessions[1], BESIDE_GRACE_S) is not None, None


def _kill_after(
    running: Future[ProgramResult], session: SandboxSession, grace_s: float
) -> Future[ProgramResult] | None:
    """Give ``running`` ``grace_s`` seconds to end, then kill its session's runs.

    Returns ``running`` when it had to be killed, None when it ended by itself.
    """
    _, pending = wait([running], timeout=grace_s)
    if not pending:
        return None
    session.cancel()
    wait([running])
    return running
