"""``run_job``: the one job function both executors call (the local pool, a Celery task).

It leases the job, runs ``pipeline.evaluate_task`` in a fresh run folder while a heartbeat
thread renews the lease, and commits the result with the lease's token. A lost lease (the
reaper took the job back, or the submission was cancelled) cancels the evaluation and nothing
is written; a worker that dies leaves a lease the reaper returns to the queue.
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from proctor.entries import entry_flags, unpack_upload
from proctor.entries.manifest import set_executable_bits
from proctor.errors import ArchiveError, JobCancelledError, ProctorError
from proctor.executor.runtime import WorkerRuntime
from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.disclosure import HIDDEN_DATA_STAGES
from proctor.pipeline.entry_image import upload_limits
from proctor.pipeline.progress import StageKey
from proctor.pipeline.report import StageReport, TaskReport
from proctor.pipeline.report_codec import to_data
from proctor.pipeline.task import TaskJob, evaluate_task, refused, scorer_environment_key
from proctor.protocols.registry import driver_for
from proctor.store import jobs
from proctor.store.models import ChallengeVersion, Job, SubmissionRow
from proctor.store.runfolder import ENTRY_IMAGE_FILES, SCORER_PAGES, RunFolder
from proctor.types import Failure, JobState, RunStatus, Stage

UPLOAD_NAME = "upload"
log = logging.getLogger(__name__)


def run_job(job_id: int, worker_id: str, runtime: WorkerRuntime) -> bool:
    """A broker's message for job ``job_id``: run the next fair job of that job's queue.

    The message only wakes a worker: which job it runs is the fair order's choice among the
    challenges sharing job ``job_id``'s broker queue (``store.fair_queue``). False when none
    may run now.
    """
    return run_next(worker_id, runtime, scope=queue_scope(runtime, job_id))


def run_next(worker_id: str, runtime: WorkerRuntime, scope: jobs.Scope = jobs.EVERYTHING) -> bool:
    """Lease the next job in ``scope``, fairly between teams, and run it; False if none may run."""
    service = runtime.service
    lease = jobs.claim(
        runtime.db, worker_id, service.lease_s, scope=scope, team_cap=service.team_jobs
    )
    if lease is None:
        return False
    execute(lease, runtime)
    return True


def queue_of_job(runtime: WorkerRuntime, job_id: int) -> str:
    """The broker queue of job ``job_id``: its challenge's route, else the default queue."""
    with runtime.db() as session:
        challenge = session.scalar(
            select(SubmissionRow.challenge)
            .join(Job, Job.submission_id == SubmissionRow.id)
            .where(Job.id == job_id)
        )
    return runtime.service.queue_of(challenge or "")


def queue_scope(runtime: WorkerRuntime, job_id: int) -> jobs.Scope:
    """The challenges sharing job ``job_id``'s broker queue (``PROCTOR_QUEUE_ROUTES``)."""
    service = runtime.service
    if not service.queue_routes:
        return jobs.EVERYTHING
    queue = queue_of_job(runtime, job_id)
    routed = {name: routed_to for name, routed_to in service.queue_routes}
    if queue != service.queue:
        return jobs.Scope(only=frozenset(n for n, q in routed.items() if q == queue))
    return jobs.Scope(excluding=frozenset(n for n, q in routed.items() if q != queue))


class _StageRecorder:
    """A progress listener that writes the running stage and its case count to the job row.

    A stage on hidden data is recorded as such before it starts (the submission counts from
    then on); when the lease is already lost (cancelled, reaped) the job is stopped at once
    rather than at the next heartbeat, so no hidden stage runs for a submission that is free.
    """

    def __init__(self, runtime: WorkerRuntime, lease: jobs.Lease, cancel: CancelToken) -> None:
        self.runtime, self.lease, self.cancel = runtime, lease, cancel

    def stage_started(self, key: StageKey, total_cases: int) -> None:
        hidden = key.stage in HIDDEN_DATA_STAGES
        stage = str(key.stage)
        if not jobs.set_stage(self.runtime.db, self.lease, stage, hidden=hidden, cases=total_cases):
            self.cancel.cancel()
            self.cancel.check()

    def case_finished(self, key: StageKey, ok: bool) -> None:
        """Count the case on the job row (the submission's page shows the count live)."""
        jobs.count_case(self.runtime.db, self.lease)

    def stage_step(self, key: StageKey, done: int, total: int, text: str) -> None:
        """Count a step (prep's build) as the stage's cases on the job row, without its text.

        The first step sets the count (``0 of N``), each next one counts one more; when the
        steps are over the stage shows no count again (the rest of prep has no cases).
        """
        stage = str(key.stage)
        hidden = key.stage in HIDDEN_DATA_STAGES
        if done == 0 or done >= total:
            held = jobs.set_stage(self.runtime.db, self.lease, stage, hidden=hidden,
                                  cases=total if done < total else 0)  # fmt: skip
        else:
            held = jobs.count_case(self.runtime.db, self.lease)
        if not held:
            self.cancel.cancel()
            self.cancel.check()

    def stage_finished(self, report: StageReport) -> None:
        """The next stage_started replaces the stage."""


@contextmanager
def _heartbeat(runtime: WorkerRuntime, lease: jobs.Lease, cancel: CancelToken) -> Iterator[None]:
    """Renew ``lease`` every ``heartbeat_s`` while the body runs; cancel the job if it is lost."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(runtime.service.heartbeat_s):
            try:
                held = jobs.heartbeat(runtime.db, lease, runtime.service.lease_s)
            except SQLAlchemyError as err:  # unreachable, or this session was ended: try again
                log.warning("job %s: heartbeat failed (%s); trying again", lease.job_id, err)
                continue
            if not held:
                cancel.cancel()
                return

    thread = threading.Thread(target=beat, name=f"heartbeat-{lease.job_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def execute(lease: jobs.Lease, runtime: WorkerRuntime) -> None:
    """Run the leased job and commit its outcome (nothing when the lease was lost).

    The run's logs become an artifact inside the commit's transaction, so a job cancelled or
    reaped meanwhile stores nothing that no row refers to.
    """
    rows = _rows(runtime, lease.job_id)
    job = rows[0]
    folder = RunFolder.create(runtime.settings.work_root, f"job-{lease.job_id}-a{lease.attempt}")
    cancel = CancelToken()
    try:
        with runtime.running(cancel), _heartbeat(runtime, lease, cancel):
            report = _evaluate(runtime, lease, rows, folder, cancel)
            cancel.check()  # a run killed by the cancel may have ended a stage: no result
        outcome = _outcome(report)
        logs = _run_logs(folder, job.task)
    except JobCancelledError:
        if runtime.stopping and jobs.release(runtime.db, lease):
            log.warning("job %s attempt %s: the worker stopped; the job is queued again",
                        lease.job_id, lease.attempt)  # fmt: skip
            return
        log.warning("job %s attempt %s: lease lost, evaluation stopped, nothing stored",
                    lease.job_id, lease.attempt)  # fmt: skip
        return
    except Exception:
        if not _lease_lost(runtime, lease):
            raise
        # e.g. frozen mid-transaction past its lease, its session ended by the database
        log.warning("job %s attempt %s: lease lost, evaluation stopped, nothing stored",
                    lease.job_id, lease.attempt)  # fmt: skip
        return
    finally:
        folder.discard()
    with runtime.artifacts.staged(logs) as staged:
        outcome = dataclasses.replace(outcome, run_artifact=staged.sha256)
        if not jobs.commit(runtime.db, lease, outcome, keep=lambda: runtime.artifacts.keep(staged)):
            log.warning("job %s attempt %s: lease lost before the commit, result discarded",
                        lease.job_id, lease.attempt)  # fmt: skip
            return
    if runtime.job_committed is not None:
        runtime.job_committed(lease.job_id)  # the "finished" mail's hook (WorkerRuntime)


def _lease_lost(runtime: WorkerRuntime, lease: jobs.Lease) -> bool:
    """True when ``lease`` is known to be lost (False when held, or when nobody can tell)."""
    try:
        return not jobs.heartbeat(runtime.db, lease, runtime.service.lease_s)
    except SQLAlchemyError:
        return False


def _rows(runtime: WorkerRuntime, job_id: int) -> tuple[Job, SubmissionRow, ChallengeVersion]:
    with runtime.db() as session:
        job = session.get(Job, job_id)
        submission = session.get(SubmissionRow, job.submission_id) if job else None
        bundle = session.get(ChallengeVersion, submission.challenge_id) if submission else None
        if job is None or submission is None or bundle is None:
            raise LookupError(f"job {job_id} has no submission or challenge row")
        return job, submission, bundle


def _evaluate(
    runtime: WorkerRuntime,
    lease: jobs.Lease,
    rows: tuple[Job, SubmissionRow, ChallengeVersion],
    folder: RunFolder,
    cancel: CancelToken,
) -> TaskReport:
    """Unpack the upload into ``folder`` and evaluate the job's task."""
    job, submission, bundle = rows
    challenge = runtime.challenge(Path(bundle.path))
    phase = challenge.phase(submission.phase)
    upload = runtime.artifacts.copy_to(submission.upload_sha256, folder.root / UPLOAD_NAME)
    task_job = TaskJob(
        challenge,
        phase,
        job.task,
        folder.entry,
        folder,
        jobs=_case_jobs(challenge.parallelism.jobs),
        name_task=len(phase.tasks) > 1,
        cancel=cancel,
    )
    try:
        manifest = driver_for(challenge.protocol.kind).manifest(challenge.protocol)
        limits = upload_limits(challenge)
        unpacked = unpack_upload(
            upload, folder.entry, limits=limits, root_names=manifest.root_names()
        )
    except ArchiveError as err:
        return refused(task_job, str(err))
    root = unpacked.root
    made = tuple(set_executable_bits(root, manifest.executable))
    task_job = dataclasses.replace(
        task_job,
        entry_root=root,
        dry_run=entry_flags(root).dry_run,
        made_executable=made,
        ignored=unpacked.ignored,
        unwrapped=unpacked.unwrapped,
    )
    try:
        # an environment that cannot be built is the platform's failure, stored once, not a
        # crash of the attempt that the reaper would retry into "infrastructure"
        environments = runtime.environments(challenge, phase)
        task_job = dataclasses.replace(
            task_job,
            environment=environments.get(job.task),
            scorer_environment=environments.get(scorer_environment_key(job.task)),
        )
        return evaluate_task(task_job, runtime.sandbox, _StageRecorder(runtime, lease, cancel))
    except ProctorError as err:
        if isinstance(err, JobCancelledError):
            raise
        return _platform_failure(task_job, err)


def _case_jobs(configured: int) -> int:
    """Cases at once inside one job: the challenge's choice, one when it says 0 (every core).

    A service runs several jobs at once, so one job does not take every core.
    """
    return configured if configured > 0 else 1


def _platform_failure(job: TaskJob, err: Exception) -> TaskReport:
    """The report of a job the host could not run (no sandbox, no environment)."""
    report = refused(job, f"the platform could not run this job: {err}")
    return dataclasses.replace(report, failure=Failure.PLATFORM)


def _outcome(report: TaskReport) -> jobs.Outcome:
    """What to commit: the report and the unredacted scores (the logs' artifact comes later)."""
    full = report.full if report.status is RunStatus.SCORED else None
    return jobs.Outcome(
        status=str(report.status),
        failure=str(report.failure) if report.failure else None,
        report=json.dumps(to_data(report)),
        scores=dict(full.summary) if full is not None else {},
        cases=dict(full.per_record or {}) if full is not None else {},
    )


EXAM_OUTPUTS = "outputs/exam"
"""Where the run artifact keeps the exam's collected outputs (what a rescore scores again)."""


def _run_logs(folder: RunFolder, task: str) -> io.BytesIO:
    """The organizer's files of the run as one ``.tar.gz`` in memory (kept by the commit).

    The case log, tracebacks, exact figures, the entry image it ran in (``entry-image.json``:
    digest, base, packages; and the ``Dockerfile`` it was built from with its ``build.log``,
    under ``entry-image/``: ``runfolder.ENTRY_IMAGE_FILES``), the scorer's whole dashboard
    (``dashboard-TASK.json``), the scorer's pages (``detailed_results-TASK.html``), and the
    exam's collected outputs under ``outputs/exam`` (a rescore scores them again with a newer
    scorer; predictions uploads are kept as the upload itself).
    """
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        kept = (
            "cases.jsonl",
            "score-error.txt",
            "platform-error.txt",
            "efficiency.json",
            *ENTRY_IMAGE_FILES,
        )
        pages = (folder.scorer_page(task, name).name for name in SCORER_PAGES)
        for name in (*kept, folder.scoring_log(task).name, folder.dashboard(task).name, *pages):
            if (folder.root / name).is_file():
                tar.add(folder.root / name, arcname=name)
        exam = folder.outputs(task, Stage.EXAM)
        if exam.is_dir():
            tar.add(exam, arcname=EXAM_OUTPUTS)
    buffer.seek(0)
    return buffer


def has_queued(runtime: WorkerRuntime, scope: jobs.Scope) -> bool:
    """True when a job in ``scope`` waits in the queue."""
    with runtime.db() as session:
        waiting = session.scalar(
            select(Job.id)
            .join(SubmissionRow, SubmissionRow.id == Job.submission_id)
            .where(Job.state == JobState.QUEUED, scope.condition())
            .limit(1)
        )
    return waiting is not None
