"""A submission's evaluation: one ``evaluate_task`` job per task of the phase, then combined.

Here the jobs run in this process, every task of the phase at once on its own long-lived
thread (each job claims its own sandbox session; AutoWSL ran the datasets of a submission in
parallel, each under its own budget); the service hands the same jobs to its executor instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from proctor.entries.manifest import set_executable_bits
from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.progress import ProgressListener
from proctor.pipeline.report import EvaluationReport, TaskReport, combine
from proctor.pipeline.task import (
    JobEnvironment,
    TaskJob,
    evaluate_task,
    refused,
    scorer_environment_key,
)
from proctor.protocols.registry import driver_for
from proctor.sandbox.base import Sandbox
from proctor.spec.model import Challenge, Phase
from proctor.store.runfolder import RunFolder


@dataclass(frozen=True, slots=True)
class Submission:
    """An unpacked entry to evaluate in ``phase``: where it is and how to run it.

    ``ignored`` lists the OS/VCS litter the unpacker left out and ``unwrapped`` the archive's
    single top-level folder taken as the root (both named in the prep message).
    """

    challenge: Challenge
    phase: Phase
    entry_root: Path
    folder: RunFolder
    jobs: int = 1
    dry_run: bool = False
    cancel: CancelToken = field(default_factory=CancelToken)
    environments: Mapping[str, JobEnvironment] = field(default_factory=dict)
    keep_homes: bool = False
    ignored: tuple[str, ...] = ()
    unwrapped: str = ""

    def jobs_of(self) -> list[TaskJob]:
        """One job per task of the phase, in the phase's order."""
        several = len(self.phase.tasks) > 1
        return [
            TaskJob(
                self.challenge,
                self.phase,
                task,
                self.entry_root,
                self.folder,
                jobs=self.jobs,
                dry_run=self.dry_run,
                name_task=several,
                cancel=self.cancel,
                environment=self.environments.get(task),
                keep_home=self.keep_homes,
                scorer_environment=self.environments.get(scorer_environment_key(task)),
                ignored=self.ignored,
                unwrapped=self.unwrapped,
            )
            for task in self.phase.tasks
        ]


def evaluate_submission(
    submission: Submission, sandbox: Sandbox, progress: ProgressListener | None = None
) -> EvaluationReport:
    """Evaluate every task of the submission's phase; tasks never stop one another.

    Scripts the protocol runs get the executable bits an archive made on Windows lacks (the
    prep message says so).
    """
    protocol = submission.challenge.protocol
    manifest = driver_for(protocol.kind).manifest(protocol)
    made = tuple(set_executable_bits(submission.entry_root, manifest.executable))
    jobs = [dataclasses.replace(job, made_executable=made) for job in submission.jobs_of()]
    reports = _evaluate_jobs(jobs, sandbox, progress, submission.cancel)
    return combine(submission.challenge.name, submission.phase.name, reports)


def _evaluate_jobs(
    jobs: Sequence[TaskJob],
    sandbox: Sandbox,
    progress: ProgressListener | None,
    cancel: CancelToken,
) -> list[TaskReport]:
    """Every job at once (a thread each); a crash or Ctrl-C cancels the others."""
    if len(jobs) <= 1:
        return [evaluate_task(job, sandbox, progress) for job in jobs]
    with ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="task") as pool:
        futures = [pool.submit(evaluate_task, job, sandbox, progress) for job in jobs]
        try:
            return [future.result() for future in futures]
        except BaseException:
            cancel.cancel()
            raise


def rejected(
    submission: Submission, message: str, progress: ProgressListener | None = None
) -> EvaluationReport:
    """The report of an upload refused before anything ran (e.g. an unsafe archive)."""
    reports = [refused(job, message, progress) for job in submission.jobs_of()]
    return combine(submission.challenge.name, submission.phase.name, reports)
