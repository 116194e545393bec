"""One organizer program run in a session the caller holds: stage its inputs, run, read back.

A ``ProgramRequest`` names host folders (the program, references, outputs) and small files by
the place they show inside. They are staged where the slot may read them: copied under a
scratch folder, plain files and folders only (a link in a participant's output is not
followed), either into one capped workspace (when the inputs are small and the mount points
share a folder such as ``/app``) or one by one, mounted read-only. The writable scores folder
is a size-capped workspace of the session, and a ``shared`` folder another (private to the run
unless the caller gives one, as ``pipeline.program_pairs`` does for two programs run at once,
with a writable folder both see). The scores folder is read back by the host through folder
descriptors, never following a link, and only when it holds at most its cap
(``pipeline.program_results``).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import stat
import tempfile
from collections.abc import Collection, Mapping
from pathlib import Path

from proctor.pipeline.inputs import stage_inputs
from proctor.pipeline.program_results import ScoresFolder, identity, read_back
from proctor.sandbox.base import Limits, Mount, Outcome, RunSpec, SandboxSession
from proctor.spec.programs import SCORES_FILE, ProgramRequest, ProgramResult
from proctor.trees import BLOCK, copy_bytes, send_bytes

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
        spec = RunSpec(request.argv, [*staged, *extra], _limits(request), env, request.cwd)
        outcome = session.run(spec)
        return _result(outcome)
    folder = scratch / "scores"
    folder.mkdir()
    with session.workspace(folder, size_bytes=request.limits.scores_bytes) as written:
        session.give(written)
        made = ScoresFolder(written, request.scores, ".", identity(written))
        writable = Mount(written, request.scores, writable=True)
        shown = [*staged, writable, *extra]
        outcome = session.run(RunSpec(request.argv, shown, _limits(request), env, request.cwd))
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
            RunSpec(
                request.argv,
                mounts=[Mount(tree, common, writable=True), *extra],
                limits=_limits(request),
                env={**variables, **request.env},
                cwd=request.cwd,
            )
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


SMALL_INPUTS_BYTES = 64 * 1024**2
"""Inputs (program, references, outputs) up to this size are copied into one workspace."""


def fits_one_workspace(request: ProgramRequest, given: Collection[str] = ()) -> bool:
    """True when the request's inputs are small and its mount points share one folder.

    ``given``: mount points the caller fills with folders of its own (not copied here).
    """
    every = targets(request)
    common = posixpath.commonpath(every)
    if common == "/" or common in every:
        return False
    total = sum(len(content) for content in request.files.values())
    for source, target in request.folders:
        if target in given:
            continue
        total += _tree_bytes(source, SMALL_INPUTS_BYTES - total)
        if total > SMALL_INPUTS_BYTES:
            return False
    return True


def targets(request: ProgramRequest) -> list[str]:
    """Every mount point of the request, the writable scores and shared folders included."""
    writable = [place for place in (request.scores, request.shared) if place is not None]
    return [target for _, target in request.folders] + [*request.files, *writable]


def _tree_bytes(source: Path, budget: int) -> int:
    """Bytes (plus a block per file) a copy of ``source`` takes; stops once past ``budget``."""
    if not source.is_dir() or source.is_symlink():
        return source.lstat().st_size + BLOCK if os.path.lexists(source) else 0
    total = 0
    for root, _, names in os.walk(source, followlinks=False):
        for name in names:
            total += os.lstat(os.path.join(root, name)).st_size + BLOCK
            if total > budget:
                return total
    return total


def copy_plain(source: Path, dest: Path) -> None:
    """Copy ``source`` (a folder or a file) to ``dest``: plain files (0644) and folders only.

    Links and special files are left out; a missing source becomes an empty folder.
    """
    try:
        info = source.lstat()
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISREG(info.st_mode):
        _copy_file(source, dest)
        return
    os.mkdir(dest)
    os.chmod(dest, 0o755)  # noqa: S103 - the slot reads it (whatever the umask)
    if info is None or not stat.S_ISDIR(info.st_mode):
        return
    with os.scandir(source) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                copy_plain(Path(entry.path), dest / entry.name)
            elif entry.is_file(follow_symlinks=False):
                _copy_file(Path(entry.path), dest / entry.name)


def _copy_file(source: Path, dest: Path) -> None:
    """One regular file's bytes into a new file of mode 0644 (no link is followed)."""
    reading = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        writing = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.fchmod(writing, 0o644)  # whatever the umask
            send_bytes(reading, writing, os.fstat(reading).st_size)
        finally:
            os.close(writing)
    finally:
        os.close(reading)


def staged_mounts(request: ProgramRequest, scratch: Path) -> list[Mount]:
    """Read-only mounts of staged copies the slot may read (links and specials left out).

    When every mount point lies below one folder (``/scoring``), everything is staged as one
    tree mounted there (the writable scores folder, and the ``writable`` copies the caller
    mounts, then go over their empty places in it): a backend that packs each read-only
    source into an image of its own (as root) packs one. ``request.writable`` folders are
    left to the caller.
    """
    targets = [target for _, target in request.folders] + list(request.files)
    every = targets + ([request.scores] if request.scores is not None else [])
    common = posixpath.commonpath(every) if every else "/"
    read_only = [(source, target) for source, target in request.folders
                 if target not in request.writable]  # fmt: skip
    if common == "/" or common in every:
        return [
            *(
                Mount(_stage(source, scratch / f"folder-{index}"), target)
                for index, (source, target) in enumerate(read_only)
            ),
            *(
                Mount(write_file(scratch / f"file-{index}", content), target)
                for index, (target, content) in enumerate(request.files.items())
            ),
        ]
    tree = scratch / "view"
    tree.mkdir()
    tree.chmod(0o755)
    for source, target in read_only:
        _stage(source, inside(tree, common, target))
    for target, content in request.files.items():
        write_file(inside(tree, common, target), content)
    for writable in (request.scores, request.shared):
        if writable is not None:
            inside(tree, common, writable).mkdir(mode=0o755)
    for source, target in request.folders:
        if target in request.writable:  # the place the caller's writable copy goes over
            place = inside(tree, common, target)
            if source.is_file():
                write_file(place, b"")
            else:
                place.mkdir(mode=0o755)
    return [Mount(tree, common)]


def inside(tree: Path, common: str, target: str) -> Path:
    """Where ``target`` (below ``common`` inside the sandbox) lies in the staged ``tree``."""
    place = tree / posixpath.relpath(target, common)
    for parent in reversed(place.relative_to(tree).parents[:-1]):
        folder = tree / parent
        if not folder.exists():
            folder.mkdir()
            folder.chmod(0o755)
    return place


def _stage(source: Path, staged: Path) -> Path:
    """A copy of ``source`` (folder or file) at ``staged``; an empty folder when it is neither."""
    info = source.lstat() if os.path.lexists(source) else None
    if info is not None and stat.S_ISDIR(info.st_mode):
        stage_inputs(source, staged)
    elif info is not None and stat.S_ISREG(info.st_mode):
        shutil.copyfile(source, staged, follow_symlinks=False)
        staged.chmod(0o644)
    else:  # nothing there (a case without output): an empty folder
        staged.mkdir()
        staged.chmod(0o755)
    return staged


def write_file(path: Path, content: bytes) -> Path:
    """``content`` as a new file the slot may read (0644)."""
    path.write_bytes(content)
    path.chmod(0o644)
    return path
