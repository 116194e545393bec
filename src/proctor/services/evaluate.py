"""Use case: evaluate one entry against one challenge phase on this host (``proctor run``)."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from proctor.entries import unpack_entry
from proctor.errors import ArchiveError, UsageError
from proctor.executor.slots import claim_slot
from proctor.pipeline.evaluation import EvaluationSetup, evaluate, rejected
from proctor.pipeline.progress import ProgressListener, SilentProgress
from proctor.pipeline.report import EvaluationReport
from proctor.sandbox import create_sandbox
from proctor.services.catalog import resolve_challenge
from proctor.settings import Settings


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What ``proctor run`` asks for. ``jobs`` None means the challenge's choice (0 = cores)."""

    entry: Path
    challenge: str
    phase: str | None = None
    jobs: int | None = None
    keep: bool = False


def default_jobs(requested: int | None, configured: int) -> int:
    """Cases run at once: the request, else the challenge's setting, 0 meaning every core."""
    jobs = requested if requested is not None else configured
    return jobs if jobs > 0 else (os.cpu_count() or 1)


def run_entry(
    request: RunRequest, settings: Settings, progress: ProgressListener | None = None
) -> EvaluationReport:
    """Evaluate ``request.entry`` as the official evaluation would, in this host's sandbox.

    Config and usage problems raise ``UsageError``; an entry that fails a stage is a report
    with status ``failed``, never an exception.
    """
    if not request.entry.exists():
        raise UsageError(f"entry {request.entry} does not exist: pass an archive or a folder")
    challenge = resolve_challenge(request.challenge)
    try:
        phase = challenge.phase(request.phase)
    except KeyError as err:
        raise UsageError(str(err.args[0])) from None
    sandbox = create_sandbox(settings)
    listener = progress or SilentProgress()
    settings.work_root.mkdir(parents=True, exist_ok=True)
    run_dir = Path(tempfile.mkdtemp(prefix=f"{challenge.name}-", dir=settings.work_root))
    run_dir.chmod(0o755)  # sandbox slots (other uids) traverse it to reach their mounts
    try:
        try:
            entry_root = unpack_entry(request.entry, run_dir / "entry")
        except ArchiveError as err:
            report = rejected(challenge, phase, str(err))
            listener.stage_finished(report.stages[0])
            return report
        with claim_slot(settings.slot_locks) as slot:
            setup = EvaluationSetup(
                run_dir=run_dir,
                sandbox=sandbox,
                slot=slot,
                jobs=default_jobs(request.jobs, challenge.parallelism.jobs),
                progress=listener,
                determinism_cases=phase.determinism_cases,
            )
            report = evaluate(challenge, phase, entry_root, setup)
            return dataclasses.replace(report, run_dir=run_dir) if request.keep else report
    finally:
        if not request.keep:
            shutil.rmtree(run_dir, ignore_errors=True)
