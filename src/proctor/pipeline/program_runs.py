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
import shutil
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.inputs import stage_inputs
from proctor.sandbox.base import Limits, Mount, Outcome, Sandbox, SandboxSession
from proctor.sandbox.rootfs import RootFilesystem
from proctor.scoring.program import SCORES_FILE, ProgramRequest, ProgramResult

TMP_BYTES = 256 * 1024**2


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
        mounts = _staged_mounts(request, scratch)
        limits = _limits(request)
        env = {**variables, **request.env}
        if request.scores is None:
            outcome = session.run(
                request.argv, mounts=mounts, limits=limits, env=env, cwd=request.cwd
            )
            return _result(outcome)
        folder = scratch / "scores"
        folder.mkdir()
        with session.workspace(folder, size_bytes=request.limits.scores_bytes) as written:
            writable = Mount(written, request.scores, writable=True)
            outcome = session.run(
                request.argv, mounts=[*mounts, writable], limits=limits, env=env, cwd=request.cwd
            )
            data, problem = read_capped(written / SCORES_FILE, request.limits.scores_bytes)
        return _result(outcome, data, problem)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _staged_mounts(request: ProgramRequest, scratch: Path) -> list[Mount]:
    """Read-only mounts of staged copies the slot may read (links and specials left out)."""
    mounts = []
    for index, (source, target) in enumerate(request.folders):
        staged = scratch / f"folder-{index}"
        info = source.lstat() if os.path.lexists(source) else None
        if info is not None and stat.S_ISDIR(info.st_mode):
            stage_inputs(source, staged)
        elif info is not None and stat.S_ISREG(info.st_mode):
            shutil.copyfile(source, staged, follow_symlinks=False)
            staged.chmod(0o644)
        else:  # nothing there (a case without output): an empty folder
            staged.mkdir()
            staged.chmod(0o755)
        mounts.append(Mount(staged, target))
    for index, (target, content) in enumerate(request.files.items()):
        made = scratch / f"file-{index}"
        made.write_bytes(content)
        made.chmod(0o644)
        mounts.append(Mount(made, target))
    return mounts


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


def read_capped(path: Path, cap: int) -> tuple[bytes | None, str | None]:
    """(content, None) of a regular file of at most ``cap`` bytes; (None, why) otherwise.

    Never follows a link (the program may have been steered into making one), never reads
    past ``cap``; a missing file is (None, None).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, None
    except OSError as err:
        return None, f"{SCORES_FILE} cannot be opened ({os.strerror(err.errno or 0)})"
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None, f"{SCORES_FILE} is not a regular file"
    with os.fdopen(fd, "rb") as stream:
        data = stream.read(cap + 1)
    if len(data) > cap:
        return None, f"{SCORES_FILE} is over {cap} bytes"
    return data, None


def _result(
    outcome: Outcome, data: bytes | None = None, problem: str | None = None
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
    )
