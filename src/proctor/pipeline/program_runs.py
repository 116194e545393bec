"""Run an organizer's program (a scoring program, an output check) in the sandbox.

The seam between ``scoring`` (which builds a ``ProgramRequest`` and judges its result, but never
touches the sandbox) and ``sandbox`` (which knows nothing of challenges): the folders a request
names are staged under a scratch folder the slot may read (hard links or copies, plain files
and folders only: a link in a participant's output is not followed), small files are written
there, the writable folder is a size-capped workspace of the session, and ``scores.json`` is
read back by the host without following links and never past its cap.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.inputs import stage_inputs
from proctor.sandbox.base import Limits, Mount, Outcome, Sandbox, SandboxSession
from proctor.sandbox.rootfs import RootFilesystem
from proctor.spec.programs import SCORES_FILE, ProgramRequest, ProgramResult

TMP_BYTES = 256 * 1024**2
SMALL_INPUTS_BYTES = 64 * 1024**2
"""Inputs (program, references, outputs) up to this size are copied into one workspace."""
BLOCK = 4096


class SessionProgramRunner:
    """Runs programs in a session the caller holds (output checks during a job's stages)."""

    def __init__(
        self, session: SandboxSession, scratch: Path, variables: Mapping[str, str] | None = None
    ) -> None:
        self.session = session
        self.scratch = scratch
        self.variables = dict(variables or {})

    def __call__(self, request: ProgramRequest) -> ProgramResult:
        """Run ``request`` in the held session."""
        return run_program(self.session, request, self.scratch, self.variables)


class SandboxProgramRunner:
    """Runs each program in a session of its own: a fresh slot, ``root`` as its filesystem.

    ``variables``: the environment's declared variables (the request's own win); ``cancel``:
    the job's token, which kills a program under way.
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

    def __call__(self, request: ProgramRequest) -> ProgramResult:
        """Claim a slot, run ``request`` in it, release the slot."""
        with self.sandbox.session(self.root) as session:
            listening = (
                self.cancel.listening(session.cancel)
                if self.cancel is not None
                else contextlib.nullcontext()
            )
            with listening:
                return run_program(session, request, self.scratch, self.variables)


def run_program(
    session: SandboxSession,
    request: ProgramRequest,
    scratch_parent: Path,
    variables: Mapping[str, str],
) -> ProgramResult:
    """Stage the request's folders and files, run it in ``session``, read its scores back."""
    scratch_parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="program-", dir=scratch_parent))
    scratch.chmod(0o711)
    try:
        limits = _limits(request)
        env = {**variables, **request.env}
        if _fits_one_workspace(request):
            return _run_in_one_workspace(session, request, scratch, limits, env)
        mounts = _staged_mounts(request, scratch)
        if request.scores is None:
            outcome = session.run(
                request.argv, mounts=mounts, limits=limits, env=env, cwd=request.cwd
            )
            return _result(outcome)
        folder = scratch / "scores"
        folder.mkdir()
        with session.workspace(folder, size_bytes=request.limits.scores_bytes) as written:
            _seed(session, request, written)
            writable = Mount(written, request.scores, writable=True)
            outcome = session.run(
                request.argv, mounts=[*mounts, writable], limits=limits, env=env, cwd=request.cwd
            )
            name, data, problem = read_scores_file(written, request)
            if request.collect is not None:
                _copy(written, request.collect)
        return _result(outcome, data, problem, name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _seed(session: SandboxSession, request: ProgramRequest, written: Path) -> None:
    """Copy ``request.seed`` into the writable folder, then hand it to the slot."""
    if request.seed is not None and request.seed.is_dir():
        for item in request.seed.iterdir():
            if item.is_dir() and not item.is_symlink():
                _copy(item, written / item.name)
            elif item.is_file() and not item.is_symlink():
                _copy_file(item, written / item.name)
    session.give(written)


def _fits_one_workspace(request: ProgramRequest) -> bool:
    """True when the request's inputs are small and its mount points share one folder."""
    every = _targets(request)
    common = posixpath.commonpath(every)
    if common == "/" or common in every:
        return False
    total = sum(len(content) for content in request.files.values())
    for source, _ in request.folders:
        total += _tree_bytes(source, SMALL_INPUTS_BYTES - total)
        if total > SMALL_INPUTS_BYTES:
            return False
    return True


def _targets(request: ProgramRequest) -> list[str]:
    """Every mount point of the request, the writable scores folder included."""
    scores = [request.scores] if request.scores is not None else []
    return [target for _, target in request.folders] + [*request.files, *scores]


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


def _run_in_one_workspace(
    session: SandboxSession,
    request: ProgramRequest,
    scratch: Path,
    limits: Limits,
    env: Mapping[str, str],
) -> ProgramResult:
    """Small inputs: copies in one capped workspace, bound at the mount points' common folder.

    The copies are owned by root (files 0644, folders 0755): the program reads them and cannot
    change them; only the scores folder (when the request has one) is given to its slot. One
    writable bind, no image to pack: what makes a program cheap when its inputs are small.
    """
    common = posixpath.commonpath(_targets(request))
    size = SMALL_INPUTS_BYTES + request.limits.scores_bytes + 2 * 1024**2
    with session.workspace(scratch / "view", size_bytes=size) as tree:
        for source, target in request.folders:
            _copy(source, _inside(tree, common, target))
        for target, content in request.files.items():
            _write(_inside(tree, common, target), content)
        written = _inside(tree, common, request.scores) if request.scores else None
        if written is not None:
            written.mkdir(mode=0o755)
            _seed(session, request, written)
        outcome = session.run(
            request.argv,
            mounts=[Mount(tree, common, writable=True)],
            limits=limits,
            env=env,
            cwd=request.cwd,
        )
        if written is None:
            return _result(outcome)
        name, data, problem = read_scores_file(written, request)
        if request.collect is not None:
            _copy(written, request.collect)
    return _result(outcome, data, problem, name)


def _copy(source: Path, dest: Path) -> None:
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
                _copy(Path(entry.path), dest / entry.name)
            elif entry.is_file(follow_symlinks=False):
                _copy_file(Path(entry.path), dest / entry.name)


def _copy_file(source: Path, dest: Path) -> None:
    """One regular file's bytes into a new file of mode 0644 (no link is followed)."""
    reading = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        writing = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.fchmod(writing, 0o644)  # whatever the umask
            size = os.fstat(reading).st_size
            copied = 0
            while copied < size:
                sent = os.sendfile(writing, reading, copied, size - copied)
                if sent == 0:
                    break
                copied += sent
        finally:
            os.close(writing)
    finally:
        os.close(reading)


def _staged_mounts(request: ProgramRequest, scratch: Path) -> list[Mount]:
    """Read-only mounts of staged copies the slot may read (links and specials left out).

    When every mount point lies below one folder (``/scoring``), everything is staged as one
    tree mounted there (the writable scores folder then goes over its empty place in it): a
    backend that packs each read-only source into an image of its own (as root) packs one.
    """
    targets = [target for _, target in request.folders] + list(request.files)
    every = targets + ([request.scores] if request.scores is not None else [])
    common = posixpath.commonpath(every) if every else "/"
    if common == "/" or common in every:
        return [
            *(
                Mount(_stage(source, scratch / f"folder-{index}"), target)
                for index, (source, target) in enumerate(request.folders)
            ),
            *(
                Mount(_write(scratch / f"file-{index}", content), target)
                for index, (target, content) in enumerate(request.files.items())
            ),
        ]
    tree = scratch / "view"
    tree.mkdir()
    tree.chmod(0o755)
    for source, target in request.folders:
        _stage(source, _inside(tree, common, target))
    for target, content in request.files.items():
        _write(_inside(tree, common, target), content)
    if request.scores is not None:
        _inside(tree, common, request.scores).mkdir(mode=0o755)
    return [Mount(tree, common)]


def _inside(tree: Path, common: str, target: str) -> Path:
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


def _write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    path.chmod(0o644)
    return path


def _limits(request: ProgramRequest) -> Limits:
    limits = request.limits
    return Limits(
        wall_s=request.wall_s,
        memory_bytes=limits.memory_bytes,
        processes=limits.processes,
        file_size_bytes=limits.scores_bytes,
        tmp_bytes=min(TMP_BYTES, limits.memory_bytes // 4),
        log_bytes=limits.log_bytes,
    )


def read_scores_file(folder: Path, request: ProgramRequest) -> tuple[str, bytes | None, str | None]:
    """(name, content, problem) of the first of ``request.scores_names`` the program wrote."""
    for name in request.scores_names:
        data, problem = read_capped(folder / name, request.limits.scores_bytes, name)
        if data is not None or problem is not None:
            return name, data, problem
    return request.scores_names[0], None, None


def read_capped(path: Path, cap: int, name: str = SCORES_FILE) -> tuple[bytes | None, str | None]:
    """(content, None) of a regular file of at most ``cap`` bytes; (None, why) otherwise.

    Never follows a link (the program may have been steered into making one), never reads
    past ``cap``; a missing file is (None, None).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, None
    except OSError as err:
        return None, f"{name} cannot be opened ({os.strerror(err.errno or 0)})"
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None, f"{name} is not a regular file"
    with os.fdopen(fd, "rb") as stream:
        data = stream.read(cap + 1)
    if len(data) > cap:
        return None, f"{name} is over {cap} bytes"
    return data, None


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
