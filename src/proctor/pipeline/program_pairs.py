"""A program pair: two organizer programs at once, each in a sandbox of its own, sharing a folder.

Codabench's ``ingestion_only_during_scoring`` runs the ingestion program (the participant's
code) beside the scoring program; they talk through ``/app/shared``. Here each gets a session
of its own (its own slot uid and mount namespace; the references are among the scoring
program's folders only) and the folders both see are capped workspaces opened to both slots
(``sandbox.workspace.open_to_every_run``): the shared folder, and each folder both requests
show writable at the same place from the same source (Codabench's ``/app/input/res``, which
holds the participant's code and where an AutoDL-style ingestion writes the predictions the
scoring program reads as they come): one scratch copy both change, as one folder two
containers mount. The clock:

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
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from proctor.entries.limits import special_kind
from proctor.pipeline.program_exec import copy_plain, run_program
from proctor.sandbox.base import SandboxSession
from proctor.sandbox.workspace import open_to_every_run
from proctor.spec.programs import BESIDE_GRACE_S, ProgramRequest, ProgramResult
from proctor.trees import copy_bytes, walk

TIMEOUT_GRACE_S = 2.0
"""Seconds the other program may take to reach its own limit once one timed out."""
SPECIAL_SHOWN = 5
"""How many special files left in the shared folders the organizer's log names."""
SPECIAL_WALKED = 100_000
"""How many entries of the shared folders are looked at for them, at most."""

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
        both: dict[str, Path] = {}
        for index, (source, target) in enumerate(both_writable(request, beside)):
            size = copy_bytes(source) + request.limits.scratch_bytes
            space = stack.enter_context(main.workspace(place / f"both-{index}", size_bytes=size))
            both[target] = _copy_for_both(source, space)
        alone = dataclasses.replace(request, beside=None)
        return _race((main, alone), (other, beside), scratch, variables, (shared, both))


def both_writable(request: ProgramRequest, beside: ProgramRequest) -> list[tuple[Path, str]]:
    """The folders both requests show writable at the same place from the same source.

    Never a working folder: each program's own (``sys.path[0]`` for Python) stays its own,
    even where both come from one folder, so the participant's code beside the scoring program
    cannot plant a module the scoring program imports.
    """
    own = {request.cwd, beside.cwd}
    return [
        (source, target)
        for source, target in request.folders
        if target in request.writable and target in beside.writable and target not in own
        and (source, target) in beside.folders and _plain_folder(source)
    ]  # fmt: skip


def _plain_folder(path: Path) -> bool:
    """True when ``path`` is a folder itself (not a link to one)."""
    return os.path.lexists(path) and stat.S_ISDIR(path.lstat().st_mode)


def _copy_for_both(source: Path, space: Path) -> Path:
    """``space`` (a workspace) filled with a copy of the folder ``source``, open to both runs.

    The copy is the workspace itself, so it is remounted ``nosymfollow`` as the shared folder.
    """
    with os.scandir(source) as entries:  # as copy_plain: plain files and folders, no link
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False):
                copy_plain(Path(entry.path), space / entry.name)
    for root, _, names in os.walk(space):  # copy_plain made plain files and folders only
        open_to_every_run(Path(root))
        for name in names:
            os.chmod(os.path.join(root, name), 0o666)  # noqa: S103 - two sandboxes share it
    return space


def _race(
    first: tuple[SandboxSession, ProgramRequest],
    second: tuple[SandboxSession, ProgramRequest],
    scratch: Path,
    variables: Mapping[str, str],
    folders: tuple[Path, Mapping[str, Path]],
) -> ProgramResult:
    """Run both; stop the one beside when the main one ends, both when one times out.

    ``folders``: the shared folder (shown at each request's ``shared``) and the writable
    folders both see, by mount point.
    """
    shared, both = folders
    sessions = (first[0], second[0])
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="program") as pool:
        main, other = (
            pool.submit(run_program, session, request, scratch, variables,
                        {str(request.shared): shared, **both})
            for session, request in (first, second)
        )  # fmt: skip
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
    shown = {str(first[1].shared): shared, **both}
    return dataclasses.replace(
        main_result,
        beside=dataclasses.replace(other_result, stopped=stopped),
        left_shared=special_entries(shown),
    )


def special_entries(folders: Mapping[str, Path], limit: int = SPECIAL_SHOWN) -> tuple[str, ...]:
    """Up to ``limit`` entries of ``folders`` (by mount point) not plain files or folders.

    Each as ``FIFO (named pipe) 'name' in /app/input/res``. Either program of a pair could
    have made them (the participant's code too); run once both have ended, walking level by
    level without following links (``proctor.trees.walk``).
    """
    found: list[str] = []
    looked = 0
    for point, folder in folders.items():
        with contextlib.suppress(OSError):  # a folder the host may not read (not as root)
            for item in walk(folder):
                looked += 1
                if looked > SPECIAL_WALKED:  # an entry can leave millions of empty files
                    return tuple(found)
                kind = special_kind(item.info.st_mode)
                if kind is not None:
                    found.append(f"{kind} {item.name!r} in {point}")
                    if len(found) >= limit:
                        return tuple(found)
    return tuple(found)


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
