"""Submit an entry to a phase, follow it (status, queue position, report), cancel it.

A submission is stored with one job per task of the phase; the executor runs the jobs. What
a participant reads of a result is the report the worker stored, already filtered by each
stage's disclosure policy (``pipeline.disclosure``); another team's submission is "not found".
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from sqlalchemy import select
from sqlalchemy.orm import Session

from proctor.entries import unpack_entry
from proctor.entries.foldersource import FolderSource
from proctor.entries.unpack import open_source
from proctor.errors import (
    ArchiveError,
    NotFoundError,
    PhaseChoiceError,
    RefusedError,
    UsageError,
)
from proctor.pipeline.disclosure import HIDDEN_DATA_STAGES
from proctor.pipeline.entry_image import upload_limits
from proctor.pipeline.report import EvaluationReport, StageReport, TaskReport, combine
from proctor.pipeline.report_codec import from_data
from proctor.protocols import bare_files
from proctor.protocols.registry import driver_for
from proctor.services.platform import submission_fields
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import LiveCases, Receipt, SubmissionStatus
from proctor.services.platform.installs import current, version_of
from proctor.services.platform.ladder_view import laddered_report
from proctor.services.platform.organizer_team import NO_TEAM, submitter
from proctor.services.platform.phase_times import check_open, no_open_phase
from proctor.services.platform.quota import WITHHELD, check_quota, submission_counts, why_free
from proctor.services.platform.registrations import require_participation
from proctor.services.platform.resources import Platform
from proctor.services.platform.shown_status import HIDDEN_STAGE, live_view
from proctor.services.platform.submission_ids import full_id
from proctor.services.platform.uploads import unpacking_slot
from proctor.spec import Challenge, Phase
from proctor.store import jobs as job_store
from proctor.store.artifacts import Staged
from proctor.store.locks import lock_row
from proctor.store.models import Job, Result, SubmissionRow, Team
from proctor.types import Failure, JobState, RunStatus, Stage, StageStatus

LOST_MESSAGE = (
    "the worker running this job was lost {n} times; the organizers have been told and your "
    "entry is not at fault"
)


def choose_phase(challenge: Challenge, name: str | None, now: float) -> Phase:
    """Phase ``name``, or the single open phase; a refusal listing the open ones otherwise."""
    if name is not None:
        try:
            return challenge.phase(name)
        except KeyError as err:
            raise UsageError(str(err.args[0])) from None
    moment = datetime.fromtimestamp(now, UTC)
    open_phases = [p for p in challenge.phases if p.is_open(moment)]
    if len(open_phases) == 1:
        return open_phases[0]
    if not open_phases:
        raise RefusedError(no_open_phase(challenge, moment))
    names = tuple(p.name for p in open_phases)
    raise PhaseChoiceError(
        f"several phases are open ({', '.join(names)}): choose one with --phase", names
    )


def _check_archive(path: Path, challenge: Challenge, scratch: Path, name: str) -> Path | None:
    """Refuse an upload that is not a safe archive (unpacked once, into ``scratch``).

    A bare file the challenge expects (``bare_files``), or an archive holding only it, is
    answered with the archive to store instead (in ``scratch``); None: store the upload.
    """
    expected = bare_files.expected_file(challenge)
    names = driver_for(challenge.protocol.kind).manifest(challenge.protocol).root_names()
    limits = upload_limits(challenge)
    try:
        source = open_source(path)
    except ArchiveError:
        if expected is None or not expected.accepts(name):
            raise bare_files.bare_refusal(name, expected) from None
        wrapped = bare_files.wrap(path, expected.place(name), scratch / "bare.zip")
        unpack_entry(wrapped, scratch / "bare", limits=limits, root_names=names)  # as stored
        return wrapped
    except Exception as err:
        raise ArchiveError(f"the upload is not a zip or tar archive ({err})") from None
    if isinstance(source, FolderSource):
        raise ArchiveError("the upload must be a .zip, .tar.gz or .tar archive")
    root = unpack_entry(path, scratch / "entry", limits=limits, root_names=names)
    lone = bare_files.lone_expected_file(root, expected)
    if lone is None or expected is None:
        return None
    return bare_files.wrap(lone, expected.place(lone.name), scratch / "bare.zip")


@contextmanager
def _checked_upload(
    platform: Platform, challenge: Challenge, upload: BinaryIO, file_name: str | None = None
) -> Iterator[Staged]:
    """The upload staged in the store once it passed the archive checks; not yet an artifact.

    The upload is copied under the size cap (read chunk by chunk, never whole into memory)
    into a staging file of the store and unpacked once into scratch space, holding one of the
    platform's unpacking slots (``upload_unpacks``; ``UploadsBusyError`` after the bounded
    wait). The caller keeps it only once every other check passed: when the block ends
    without that, the staging file is deleted and a refused upload leaves no artifact.
    A bare expected file (named ``file_name``) is staged as the archive that holds it.
    """
    name = bare_files.base_name(file_name)
    with (
        unpacking_slot(platform),
        platform.artifacts.staged(upload, max_bytes=platform.settings.upload_bytes) as staged,
        tempfile.TemporaryDirectory(prefix="upload-check-") as scratch,
    ):
        if staged.size == 0:
            raise ArchiveError("the upload is empty: upload the entry as a .zip or .tar.gz file")
        try:
            wrapped = _check_archive(staged.path, challenge, Path(scratch), name)
        except ArchiveError as err:
            shown = str(err).replace(str(staged.path), "the upload")
            raise ArchiveError(shown.replace(staged.path.name, "the upload")) from None
        if wrapped is None:
            yield staged
            return
        with wrapped.open("rb") as stream, platform.artifacts.staged(stream) as arranged:
            yield arranged


def bare_file_names(challenge: Challenge) -> tuple[str, ...] | None:
    """The name patterns of the file ``challenge`` takes bare (``submission.csv``; ``*``: any).

    None: the challenge takes archives only.
    """
    expected = bare_files.expected_file(challenge)
    return expected.patterns if expected is not None else None


def check_submitter(platform: Platform, principal: Principal, challenge_name: str) -> None:
    """Refuse a caller in no team, not registered, or an unknown challenge, before the upload."""
    _, challenge = current(platform, challenge_name)
    require_participation(platform, principal, challenge)
    submitter(platform, principal)


def submit(  # noqa: PLR0917 - the faces pass the upload's parts in order
    platform: Platform,
    principal: Principal,
    challenge_name: str,
    phase_name: str | None,
    upload: BinaryIO,
    file_name: str | None = None,
    *,
    fields: Mapping[str, str] | None = None,
) -> Receipt:
    """Store the upload as a submission of the caller's team, queued; refusals say why.

    ``file_name``: the upload's name as sent; a bare prediction file the challenge expects
    (``submission.csv``) must carry it, and is stored as the archive that holds it.
    ``fields``: values of the challenge's ``submission_fields`` (checked before the upload).

    Refused (``RefusedError``): the phase is closed or the quota spent, also when found by
    the check made again once the upload was read. Bad uploads (``ArchiveError``,
    ``ArtifactTooLargeError``) and every refusal are made before anything is stored: no
    artifact, no submission row, no quota used.
    """
    row, challenge = current(platform, challenge_name)
    require_participation(platform, principal, challenge)
    principal = submitter(platform, principal)  # an organizer's test: the hidden team
    if principal.team_id is None or principal.team is None:
        raise UsageError(NO_TEAM)
    now = time.time()
    phase = choose_phase(challenge, phase_name, now)
    check_open(phase, now)
    values = submission_fields.checked(challenge, fields or {})
    with platform.db() as session:
        check_quota(session, phase, principal.team_id, challenge.name, now)
    sid = secrets.token_hex(8)
    # the artifact is kept inside the transaction that records it, after the last check
    with (
        _checked_upload(platform, challenge, upload, file_name) as staged,
        platform.db.begin() as session,
    ):
        lock_row(session, Team, principal.team_id)  # the quota's check and insert are one step
        check_quota(session, phase, principal.team_id, challenge.name, now)
        session.add(
            SubmissionRow(
                id=sid,
                team_id=principal.team_id,
                user_id=principal.user_id,
                challenge_id=row.id,
                challenge=challenge.name,
                phase=phase.name,
                upload_sha256=staged.sha256,
                created=now,
                fields=submission_fields.encoded(values),
            )
        )
        session.flush()
        for task in phase.tasks:
            session.add(Job(submission_id=sid, task=task, state=JobState.QUEUED, queued_at=now))
        session.flush()
        first = session.scalars(select(Job).where(Job.submission_id == sid)).first()
        position = job_store.queue_position(session, first) if first is not None else 0
        platform.artifacts.keep(staged)  # last: a crash before the commit leaves an orphan
    platform.audit(principal.name, "submission.create", sid, f"{challenge.name}/{phase.name}")
    platform.notify()
    return Receipt(submission=sid, team=principal.team, phase=phase.name, queue_position=position)


def visible_submission(session: Session, principal: Principal | None, sid: str) -> SubmissionRow:
    """Submission ``sid`` if the caller may see it; ``NotFoundError`` otherwise (never 403)."""
    row = session.get(SubmissionRow, sid)
    if row is None or principal is None:
        raise NotFoundError(f"no submission {sid!r}")
    if not principal.organizer and row.team_id != principal.team_id:
        raise NotFoundError(f"no submission {sid!r}")
    return row


def _lost_report(job: Job, several: bool) -> TaskReport:
    message = LOST_MESSAGE.format(n=job.attempt)
    stage = StageReport(Stage.PREP, StageStatus.FAILED, message, task=job.task if several else None)
    return TaskReport(job.task, RunStatus.FAILED, (stage,), Failure.INFRASTRUCTURE, Stage.PREP)


def _reports(session: Session, jobs: list[Job]) -> list[TaskReport]:
    several = len(jobs) > 1
    reports = []
    for job in jobs:
        if job.state == JobState.FAILED:
            reports.append(_lost_report(job, several))
            continue
        result = session.scalar(select(Result).where(Result.job_id == job.id))
        if result is not None:
            reports.append(from_data(json.loads(result.report)))
    return reports


def status(
    platform: Platform, principal: Principal | None, sid: str, *, ladder: bool = True
) -> SubmissionStatus:
    """``status --json``: status, failure, stage, queue position, cases, the report when done.

    ``cases``: the cases ended and in all of the running stage (None without cases, or while a
    participant sees only that the entry is evaluated on hidden data).

    A participant sees what ``shown_status``, ``quota`` and ``ladder_view`` allow: no live
    stage on hidden data whose timing the exam hides, nothing scored of a submission that does
    not count (``report: null`` once cancelled), only the Ladder's value in a Ladder phase
    (``ladder`` False skips that cut, for a caller that reads only the status). ``sid`` may be
    a unique prefix of the id (``submission_ids``); the answer names the full id.
    """
    sid = full_id(platform, principal, sid)
    with platform.db() as session:
        row = visible_submission(session, principal, sid)
        team = session.get(Team, row.team_id)
        jobs = list(session.scalars(select(Job).where(Job.submission_id == sid).order_by(Job.id)))
        challenge = version_of(session, row.challenge_id)
        participant = principal is not None and not principal.organizer
        state, stage, position = _progress(session, jobs, row.cancelled)
        if participant:
            state, stage, position = live_view(challenge, row.phase, jobs, (state, stage, position))
        cases = _live_cases(jobs) if state == "running" and stage != HIDDEN_STAGE else None
        report = None
        if state not in ("queued", "running", "cancelled"):
            laddered = participant and ladder
            report = _shown_report(session, row, jobs, challenge, laddered=laddered)
    if report is not None:
        state = str(report.status)
    return SubmissionStatus(
        submission=sid,
        team=team.name if team else None,
        challenge=row.challenge,
        phase=row.phase,
        status=state,
        failure=str(report.failure) if report is not None and report.failure else None,
        stage=stage,
        queue_position=position,
        cases=cases,
        report=report.to_json() if report is not None else None,
        fields=submission_fields.stored(row.fields),
    )


def _live_cases(jobs: list[Job]) -> LiveCases | None:
    """The running job's cases ended and to run in its stage (None: a stage without cases)."""
    for job in jobs:
        if job.state == JobState.RUNNING and job.cases_total:
            return LiveCases(done=job.cases_done or 0, total=job.cases_total)
    return None


def _shown_report(
    session: Session,
    row: SubmissionRow,
    jobs: list[Job],
    challenge: Challenge,
    *,
    laddered: bool,
) -> EvaluationReport | None:
    """The ended submission's report: withheld when it does not count, laddered for a team."""
    if not submission_counts(session, row):
        return _withheld(session, row, jobs)
    report = _combined(session, row, jobs)
    if report is not None and laddered:
        report = laddered_report(session, challenge, row, report)
    return report


def _withheld(session: Session, row: SubmissionRow, jobs: list[Job]) -> EvaluationReport | None:
    """A free submission's report: only the tasks the platform or infrastructure failed.

    Of those, a stage on hidden data shows only when it is the failure itself (no exam counts).
    """
    faulted = [j for j in jobs if j.failure in (Failure.PLATFORM, Failure.INFRASTRUCTURE)]
    reports = [
        dataclasses.replace(
            report,
            stages=tuple(
                stage
                for stage in report.stages
                if stage.stage not in HIDDEN_DATA_STAGES or stage.status is StageStatus.FAILED
            ),
        )
        for report in _reports(session, faulted)
    ]
    if not reports:
        return None
    report = combine(row.challenge, row.phase, reports)
    return dataclasses.replace(report, message=WITHHELD.format(why=why_free(row)))


def _progress(
    session: Session, jobs: list[Job], cancelled: bool
) -> tuple[str, str | None, int | None]:
    """The submission's state, running stage and queue position from its jobs."""
    if cancelled:
        return "cancelled", None, None
    running = [j for j in jobs if j.state == JobState.RUNNING]
    queued = [j for j in jobs if j.state == JobState.QUEUED]
    several = len(jobs) > 1
    if running:
        job = running[0]
        stage = f"{job.task}:{job.stage}" if several and job.stage else job.stage
        return "running", stage, None
    if queued:
        return "queued", None, min(job_store.queue_position(session, j) for j in queued)
    return "finished", None, None


def _combined(session: Session, row: SubmissionRow, jobs: list[Job]) -> EvaluationReport | None:
    reports = _reports(session, jobs)
    return combine(row.challenge, row.phase, reports) if reports else None


def cancel(platform: Platform, principal: Principal, sid: str) -> SubmissionStatus:
    """Cancel the submission's unfinished jobs (a running one is stopped by its worker)."""
    sid = full_id(platform, principal, sid)
    with platform.db.begin() as session:
        row = visible_submission(session, principal, sid)
        if all(
            JobState(j.state).finished
            for j in session.scalars(select(Job).where(Job.submission_id == sid))
        ):
            raise RefusedError(f"submission {sid} has finished: there is nothing to cancel")
        row.cancelled = True
    job_store.cancel_jobs(platform.db, sid)
    platform.audit(principal.name, "submission.cancel", sid)
    return status(platform, principal, sid)


@dataclass(frozen=True, slots=True)
class TeamSubmission:
    """A submission as its team's list shows it (``created``: ``YYYY-MM-DD HH:MM:SS UTC``).

    ``status`` and ``scores`` (task → metric → value; empty until scored) as ``status`` shows
    them to the caller.
    """

    submission: str
    team: str | None
    phase: str
    created: str
    status: str
    scores: dict[str, dict[str, Any]]


def listing(
    platform: Platform, principal: Principal, challenge_name: str, limit: int = 50
) -> list[TeamSubmission]:
    """The caller's team's submissions to a challenge, newest first (organizers: every team's)."""
    with platform.db() as session:
        query = select(SubmissionRow).where(SubmissionRow.challenge == challenge_name)
        if not principal.organizer:
            query = query.where(SubmissionRow.team_id == principal.team_id)
        rows = list(session.scalars(query.order_by(SubmissionRow.created.desc()).limit(limit)))
        teams = {t.id: t.name for t in session.scalars(select(Team))}
    listed = []
    for row in rows:
        shown = status(platform, principal, row.id)
        report = shown.report or {}
        listed.append(
            TeamSubmission(
                submission=row.id,
                team=teams.get(row.team_id),
                phase=row.phase,
                created=datetime.fromtimestamp(row.created, UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
                status=shown.status,
                scores=report.get("scores") or {},
            )
        )
    return listed
