"""Use case: evaluate one entry against one challenge phase on this host (``proctor run``)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from proctor.entries import entry_flags, unpack_upload
from proctor.errors import ArchiveError, ConfigError, UsageError
from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.entry_image import upload_limits
from proctor.pipeline.progress import ProgressListener
from proctor.pipeline.report import EvaluationReport
from proctor.pipeline.submission import Submission, evaluate_submission, rejected
from proctor.pipeline.task import JobEnvironment, platform_faults
from proctor.protocols import bare_files
from proctor.protocols.registry import driver_for
from proctor.sandbox import Sandbox, create_sandbox
from proctor.sandbox.bwrap_args import host_paths_shown
from proctor.services.local.catalog import resolve_challenge
from proctor.services.local.environments import BuildListener, job_environments
from proctor.settings import Settings
from proctor.spec import CHALLENGE_FILE, Challenge, Phase
from proctor.store.runfolder import RunFolder


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
    request: RunRequest,
    settings: Settings,
    progress: ProgressListener | None = None,
    cancel: CancelToken | None = None,
    builds: BuildListener | None = None,
) -> EvaluationReport:
    """Evaluate ``request.entry`` as the official evaluation would, in this host's sandbox.

    Config and usage problems raise ``UsageError``; an entry that fails a stage is a report
    with status ``failed``, never an exception. ``cancel`` stops this evaluation only
    (``JobCancelledError`` is raised). The run folder is removed unless ``request.keep``.
    Declared environments not in the store yet are built first (``builds`` hears how). This is
    the organizer's own machine: the report's ``platform_faults`` say why the platform failed.
    """
    if not request.entry.exists():
        raise UsageError(f"entry {request.entry} does not exist: pass an archive or a folder")
    challenge = resolve_challenge(request.challenge)
    try:
        phase = challenge.phase(request.phase)
    except KeyError as err:
        raise UsageError(str(err.args[0])) from None
    sandbox = create_sandbox(settings)
    environments = job_environments(challenge, phase, settings, builds)
    _check_hidden_data_is_hidden(challenge, phase, environments)
    folder = RunFolder.create(settings.work_root, challenge.name)
    try:
        submission = Submission(
            challenge,
            phase,
            folder.entry,
            folder,
            jobs=default_jobs(request.jobs, challenge.parallelism.jobs),
            cancel=cancel or CancelToken(),
            environments=environments,
            keep_homes=request.keep,
        )
        report = _evaluate_upload(request.entry, submission, sandbox, progress)
        report = dataclasses.replace(report, platform_faults=platform_faults(folder))
        if request.keep:
            return dataclasses.replace(report, run_dir=folder.commit())
        return report
    finally:
        if not request.keep:
            folder.discard()


def _evaluate_upload(
    upload: Path, submission: Submission, sandbox: Sandbox, progress: ProgressListener | None
) -> EvaluationReport:
    """Unpack the upload into the run folder and evaluate it, or report it refused."""
    challenge = submission.challenge
    limits = upload_limits(challenge)
    names = driver_for(challenge.protocol.kind).manifest(challenge.protocol).root_names()
    try:
        upload = bare_files.arranged_upload(challenge, upload, submission.folder.root)
        unpacked_entry = unpack_upload(
            upload, submission.folder.entry, limits=limits, root_names=names
        )
    except ArchiveError as err:
        return rejected(submission, str(err), progress)
    entry_root = unpacked_entry.root
    bare_files.place_lone_file(challenge, entry_root)
    dry_run = entry_flags(entry_root).dry_run
    unpacked = dataclasses.replace(
        submission,
        entry_root=entry_root,
        dry_run=dry_run,
        ignored=unpacked_entry.ignored,
        unwrapped=unpacked_entry.unwrapped,
    )
    return evaluate_submission(unpacked, sandbox, progress)


def _check_hidden_data_is_hidden(
    challenge: Challenge, phase: Phase, environments: Mapping[str, JobEnvironment]
) -> None:
    """Refuse a task whose hidden inputs or references lie where every run can read them."""
    path = challenge.root / CHALLENGE_FILE
    for name in phase.tasks:
        task = challenge.task(name)
        environment = environments.get(name)
        shown = host_paths_shown(environment.root.tree if environment is not None else None)
        index = [t.name for t in challenge.tasks].index(name)
        for key in ("hidden_inputs", "hidden_references"):
            folder = getattr(task, key)
            if folder is None:
                continue
            real = Path(folder).resolve()
            for visible in shown:
                if real == visible or real.is_relative_to(visible):
                    raise ConfigError(
                        f"{real} lies under {visible}, which the sandbox shows every entry "
                        "through its root: install the challenge's data elsewhere (not under "
                        "/usr), or declare an environment so the host's /usr is not shown",
                        path=path,
                        location=f"tasks[{index}].{key}",
                    )
