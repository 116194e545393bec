"""One organizer program run in a session the caller holds: stage, run, read back.

The request's folders and files are staged where the slot may read them
(``pipeline.program_staging``); the writable scores folder is a size-capped workspace of the
session, and a ``shared`` folder another (private to the run unless the caller gives one, as
``pipeline.program_pairs`` does for two programs run at once, with a writable folder both
see). The scores folder is read back by the host through folder descriptors, never following
a link, and only when it holds at most its cap (``pipeline.program_results``).
"""

from __future__ import annotations

import contextlib
import posixpath
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from proctor.pipeline.program_results import ScoresFolder, identity, read_back
from proctor.pipeline.program_staging import (
    SMALL_INPUTS_BYTES,
    copy_plain,
    fits_one_workspace,
    inside,
    staged_mounts,
    targets,
    write_file,
)
from proctor.sandbox.base import Limits, Mount, Outcome, SandboxSession
from proctor.spec.programs import SCORES_FILE, ProgramRequest, ProgramResult
from proctor.trees import copy_bytes

TMP_BYTES = 256 * 1024**2


def run_program(
    session: SandboxSession,
    request: ProgramRequest,
    scratch_parent: Path,
    variables: Mapping[str, str],
    given: Mapping[str, Path] | None = None,
) -> ProgramResult:
    """Stage the request's folders and files, run it in ``session``, read its scores back.

    ``given``: host folders the caller made for some mount points, shown writable as they
    are: the one at ``request.shared`` (else a private one is made), and any of
    ``request.writable`` (else this run's slot gets a scratch copy of its own).
    """
    given = dict(given or {})
    scratch_parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="program-", dir=scratch_parent))
    scratch.chmod(0o711)
    try:
        with contextlib.ExitStack() as stack:
            if request.shared is not None and request.shared not in given:
                size = request.limits.shared_bytes
                space = session.workspace(scratch / "shared", size_bytes=size)
                given[request.shared] = stack.enter_context(space)
            extra = [Mount(place, target, writable=True) for target, place in given.items()
                     if target == request.shared or target in request.writable]  # fmt: skip
            if fits_one_workspace(request, {mount.target for mount in extra}):
                return _run_in_one_workspace(session, request, scratch, variables, extra)
            return _run_staged(session, request, scratch, variables, extra)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run_staged(
    session: SandboxSession,
    request: ProgramRequest,
    scratch: Path,
    variables: Mapping[str, str],
    extra: list[Mount],
) -> ProgramResult:
    """Larger inputs: staged copies mounted read-only, the scores folder a workspace.

    A ``writable`` folder is copied into a workspace of its own (its size plus
    ``limits.scratch_bytes``) handed to the session's slot and mounted writable.
    """
    staged = staged_mounts(request, scratch)
    with contextlib.ExitStack() as stack:
        given = {mount.target for mount in extra}
        for index, (source, target) in enumerate(request.folders):
            if target in request.writable and target not in given:
                size = copy_bytes(source) + request.limits.scratch_bytes
                space = session.workspace(scratch / f"writable-{index}", size_bytes=size)
                copy = stack.enter_context(space) / "copy"
                copy_plain(source, copy)
                session.give(copy)
                staged.append(Mount(copy, target, writable=True))
        return _run_with_scores(session, request, scratch, {**variables, **request.env},
                                (staged, extra))  # fmt: skip


def _run_with_scores(
    session: SandboxSession,
    request: ProgramRequest,
    scratch: Path,
    env: Mapping[str, str],
    mounts: tuple[list[Mount], list[Mount]],
) -> ProgramResult:
    """Run with ``mounts`` (the staged ones, then the extra ones), the scores folder between."""
    staged, extra = mounts
    if request.scores is None:
        outcome = session.run(
            request.argv, mounts=[*staged, *extra], limits=_limits(request), env=env,
            cwd=request.cwd,
        )  # fmt: skip
        return _result(outcome)
    folder = scratch / "scores"
    folder.mkdir()
    with session.workspace(folder, size_bytes=request.limits.scores_bytes) as written:
        session.give(written)
        made = ScoresFolder(written, request.scores, ".", identity(written))
        writable = Mount(written, request.scores, writable=True)
        outcome = session.run(
            request.argv,
            mounts=[*staged, writable, *extra],
            limits=_limits(request),
            env=env,
            cwd=request.cwd,
        )
        name, data, problem = read_back(made, request)
    return _result(outcome, data, problem, name)


def _run_in_one_workspace(
    session: SandboxSession,
    request: ProgramRequest,
    scratch: Path,
    variables: Mapping[str, str],
    extra: list[Mount],
) -> ProgramResult:
    """Small inputs: copies in one capped workspace, bound at the mount points' common folder.

    The copies are owned by root (files 0644, folders 0755): the program reads them and cannot
    change them; only the scores folder (when the request has one) is given to its slot. One
    writable bind, no image to pack: what makes a program cheap when its inputs are small.
    The shared folder, a workspace of its own, goes over its empty place in the tree.
    """
    common = posixpath.commonpath(targets(request))
    size = SMALL_INPUTS_BYTES + request.limits.scores_bytes + 2 * 1024**2
    if request.writable:
        size += request.limits.scratch_bytes
    given = {mount.target for mount in extra}
    with session.workspace(scratch / "view", size_bytes=size) as tree:
        for source, target in request.folders:
            if target in given:  # the caller's folder goes over its empty place
                inside(tree, common, target).mkdir(mode=0o755)
                continue
            copy_plain(source, inside(tree, common, target))
            if target in request.writable:  # a scratch copy this run's slot may change
                session.give(inside(tree, common, target))
        for target, content in request.files.items():
            write_file(inside(tree, common, target), content)
        if request.shared is not None:
            inside(tree, common, request.shared).mkdir(mode=0o755)
        made = None
        if request.scores is not None:
            written = inside(tree, common, request.scores)
            written.mkdir(mode=0o755)
            session.give(written)
            relative = posixpath.relpath(request.scores, common)
            made = ScoresFolder(tree, common, relative, identity(written))
        outcome = session.run(
            request.argv,
            mounts=[Mount(tree, common, writable=True), *extra],
            limits=_limits(request),
            env={**variables, **request.env},
            cwd=request.cwd,
        )
        if made is None:
            return _result(outcome)
        name, data, problem = read_back(made, request)
    return _result(outcome, data, problem, name)


def _limits(request: ProgramRequest) -> Limits:
    limits = request.limits
    return Limits(
        wall_s=request.wall_s,
        memory_bytes=limits.memory_bytes,
        processes=limits.processes,
        file_size_bytes=max(limits.scores_bytes, limits.shared_bytes if request.shared else 0),
        tmp_bytes=min(TMP_BYTES, limits.memory_bytes // 4),
        log_bytes=limits.log_bytes,
    )


def _result(
    outcome: Outcome,
    data: bytes | None = None,
    problem: str | None = None,
    name: str = SCORES_FILE,
) -> ProgramResult:
    return ProgramResult(
        exit_status=outcome.exit_status,
        signal=outcome.signal,
        timed_out=outcome.timed_out,
        memory_exceeded=outcome.memory_exceeded,
        wall_s=outcome.wall_s,
        stdout=outcome.stdout,
        stderr=outcome.stderr,
        scores_file=data,
        scores_problem=problem,
        scores_name=name,
    )
