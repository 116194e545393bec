"""One job's description: the entry, the task, the run folder, the environments it runs in.

``TaskJob`` is what an executor hands ``pipeline.task.evaluate_task``; the helpers here build
what every protocol's stages share from it (the stage runner with its hooks, the runner of
the task's scoring program, the environment as the report names it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from proctor.environments.store import BuiltEnvironment
from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.caselog import CaseLog
from proctor.pipeline.program_runs import SandboxProgramRunner
from proctor.pipeline.progress import ProgressListener, SilentProgress
from proctor.pipeline.report import HOST_ENVIRONMENT, EnvironmentInfo
from proctor.pipeline.runner import CaseLogHook, ProgressHook, StageRunner
from proctor.sandbox.base import Sandbox
from proctor.sandbox.rootfs import RootFilesystem
from proctor.spec.environment import EntryImages, ParticipantWheels
from proctor.spec.model import Challenge, Phase
from proctor.store.runfolder import RunFolder


@dataclass(frozen=True, slots=True)
class JobEnvironment:
    """The built environment a job runs in: its root filesystem, variables and identity.

    ``entry_images``: whether entries may bring their own image instead (and its limits);
    ``store_root``: the environment store such images go to. ``workdir``: an entry image's
    ``WORKDIR`` (empty for a declared environment), for protocols that honour it.
    ``bases``: the challenge's declared environments an entry's ``Dockerfile`` may build on,
    built (by name; the services layer builds an aliased one on first use); ``imported``: the
    images the organizer imported with ``proctor env import``, by the name they came with.
    """

    root: RootFilesystem
    info: EnvironmentInfo
    variables: Mapping[str, str] = field(default_factory=dict)
    suite: str | None = None
    wheels: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    participant_wheels: ParticipantWheels | None = None
    entry_images: EntryImages | None = None
    store_root: Path | None = None
    workdir: str = ""
    bases: Mapping[str, BuiltEnvironment] = field(default_factory=dict)
    imported: Mapping[str, BuiltEnvironment] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TaskJob:
    """One job: the unpacked entry of a submission, evaluated on ``task`` of ``phase``.

    ``jobs`` cases run at once; ``dry_run`` stops after the quiz; ``name_task`` names the task
    in stage labels (a phase with several tasks); ``made_executable`` and ``ignored`` (the
    OS/VCS litter the unpacker left out) are named in the prep message, and so is ``unwrapped``
    (the archive's single top-level folder taken as the entry's root).
    """

    challenge: Challenge
    phase: Phase
    task: str
    entry_root: Path
    folder: RunFolder
    jobs: int = 1
    dry_run: bool = False
    name_task: bool = False
    cancel: CancelToken = field(default_factory=CancelToken)
    environment: JobEnvironment | None = None
    made_executable: tuple[str, ...] = ()
    keep_home: bool = False
    scorer_environment: JobEnvironment | None = None
    ignored: tuple[str, ...] = ()
    unwrapped: str = ""


def scorer_environment_key(task: str) -> str:
    """The key of ``task``'s scoring-program environment in a job's environment mapping.

    Environments are handed to jobs as one mapping (task name → environment); a task whose
    scorer is a program also finds the program's there under this key (task names never hold
    a ``:``).
    """
    return f"{task}:scorer"


def program_runner(job: TaskJob, sandbox: Sandbox) -> SandboxProgramRunner:
    """Runs ``job``'s scoring program in a session of its own, in the scorer's environment."""
    environment = job.scorer_environment
    return SandboxProgramRunner(
        sandbox,
        job.folder.scratch,
        root=environment.root if environment is not None else None,
        variables=environment.variables if environment is not None else None,
        cancel=job.cancel,
    )


def stage_runner(job: TaskJob, progress: ProgressListener | None) -> StageRunner:
    """The runner of ``job``'s stages, with the progress and organizer case-log hooks."""
    return StageRunner(
        job.task,
        shown_task=job.task if job.name_task else None,
        policy=job.challenge.disclosure_for(job.phase),
        hooks=[
            ProgressHook(progress or SilentProgress()),
            CaseLogHook(CaseLog(job.folder.case_log)),
        ],
    )


def environment_info(environment: JobEnvironment | None, *, private: bool) -> EnvironmentInfo:
    """The environment as a report names it (``host`` without one)."""
    if environment is None:
        return HOST_ENVIRONMENT
    return dataclasses.replace(environment.info, shared_page_cache=not private)
