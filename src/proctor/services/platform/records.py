"""A submission's full record for the organizer, and its entry archive as uploaded.

The record holds each task's job (state, stage, failure, attempts), the stored report, its
scores, and what only organizers see, read back from the job's run artifact: ``cases.jsonl``
(every case and stage with its stdout/stderr tails, the setup script's output among the
stages), ``efficiency.json``, the text logs (``logs.submission_logs``' files) and, for an entry
that ran in its own image, that image's facts and kept files (``image_facts``). Participants
get "not found" (``console.organizers_only``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import select

from proctor.errors import NotFoundError
from proctor.services.platform import diagnostics, image_facts
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import SubmissionRecord, TaskRecord
from proctor.services.platform.console import organizers_only
from proctor.services.platform.logs import LOG_FILES, MAX_LOG_CHARS
from proctor.services.platform.quota import iso
from proctor.services.platform.resources import Platform
from proctor.services.platform.run_files import KeptFile, kept_files
from proctor.services.platform.submission_ids import full_id
from proctor.services.platform.submissions_list import jobs_of, organizer_state
from proctor.store.models import Job, Result, Score, SubmissionRow, Team
from proctor.store.runfolder import ENTRY_IMAGE_FILES, SCORER_PAGES, scorer_page_name

MAX_CASES = 5000
"""At most this many lines of ``cases.jsonl`` are shown (a note says how many were left)."""
MAX_KEPT_BYTES = 256 * 1024**2
"""A file of the run artifact larger than this is not read into the record."""


def submission_record(platform: Platform, principal: Principal, sid: str) -> SubmissionRecord:
    """Everything stored of submission ``sid`` for the organizer (see the module docstring)."""
    organizers_only(principal)
    sid = full_id(platform, principal, sid)
    with platform.db() as session:
        row = session.get(SubmissionRow, sid)
        if row is None:
            raise NotFoundError(f"no submission {sid!r}")
        team = session.get(Team, row.team_id)
        found = jobs_of(session, [sid])[sid]
        status, failure = organizer_state(row, found)
        scores: dict[int, dict[str, float | None]] = {}
        for score in session.scalars(
            select(Score).where(Score.job_id.in_([job.id for job, _ in found]))
        ):
            scores.setdefault(score.job_id, {})[score.metric] = score.value
        tasks = [_task(platform, job, result, scores.get(job.id, {})) for job, result in found]
    return SubmissionRecord(
        submission=sid,
        team=team.name if team else None,
        challenge=row.challenge,
        phase=row.phase,
        created=iso(row.created),
        status=status,
        failure=failure,
        flagged=row.flagged,
        refunded=row.refunded,
        cancelled=row.cancelled,
        entry_sha256=row.upload_sha256,
        tasks=tasks,
    )


def _task(
    platform: Platform, job: Job, result: Result | None, scores: dict[str, float | None]
) -> TaskRecord:
    artifact = result.run_artifact if result is not None else None
    files, pages, image = _artifact_files(platform, job.task, artifact)
    cases = [json.loads(line) for line in files.pop("cases.jsonl", "").splitlines() if line]
    efficiency_text = files.pop("efficiency.json", None)
    dashboard_text = files.pop(f"dashboard-{job.task}.json", None)
    status = result.status if result is not None else None
    reason = (
        diagnostics.reason(job.task, job.failure, job.stage, files, cases)
        if diagnostics.failed(job.failure, status, str(job.state))
        else None
    )
    return TaskRecord(
        task=job.task,
        state=str(job.state),
        stage=job.stage,
        failure=job.failure,
        attempt=job.attempt,
        status=status,
        report=json.loads(result.report) if result is not None else None,
        scores=scores,
        stages=[c for c in cases if c.get("record") is None],
        cases=[c for c in cases if c.get("record") is not None][:MAX_CASES],
        cases_total=sum(1 for c in cases if c.get("record") is not None),
        efficiency=json.loads(efficiency_text) if efficiency_text else None,
        dashboard=_without_nan(dashboard_text) if dashboard_text else None,
        pages=pages,
        logs=files,
        reason=reason,
        image=image_facts.facts(image),
        image_files=image_facts.kept_names(image),
    )


def _without_nan(text: str) -> Any:
    """JSON whose NaN and infinities (a statistic over no volume) read as null."""
    return json.loads(text, parse_constant=lambda _: None)


def _artifact_files(
    platform: Platform, task: str, artifact: str | None
) -> tuple[dict[str, str], list[str], dict[str, KeptFile]]:
    """A run artifact's text files, its scorer's pages and its entry image's files.

    Logs are capped (their tail kept); pages are named only (``scorer_pages`` serves them).
    """
    pages = {scorer_page_name(task, name): name for name in SCORER_PAGES}
    long_kept = {"cases.jsonl", "efficiency.json", f"dashboard-{task}.json"}
    wanted = {*long_kept, *LOG_FILES, f"scoring-{task}.log", *pages, *ENTRY_IMAGE_FILES}
    found = kept_files(platform, artifact, wanted, MAX_KEPT_BYTES)
    image = {name: found.pop(name) for name in ENTRY_IMAGE_FILES if name in found}
    texts = {
        name: (kept.data or b"").decode("utf-8", errors="replace")
        for name, kept in found.items()
        if name not in pages
    }
    texts = {n: t if n in long_kept else t[-MAX_LOG_CHARS:] for n, t in texts.items()}
    return texts, [pages[name] for name in found if name in pages], image


def entry_archive(platform: Platform, principal: Principal, sid: str) -> tuple[Path, str]:
    """Where submission ``sid``'s entry archive is stored, byte for byte, and a file name."""
    organizers_only(principal)
    sid = full_id(platform, principal, sid)
    with platform.db() as session:
        row = session.get(SubmissionRow, sid)
        if row is None:
            raise NotFoundError(f"no submission {sid!r}")
        digest = row.upload_sha256
    if not platform.artifacts.has(digest):
        raise NotFoundError(f"the entry archive of submission {sid} is no longer stored")
    path = platform.artifacts.path(digest)
    with path.open("rb") as stream:
        magic = stream.read(4)
    suffix = ".tar.gz" if magic[:2] == b"\x1f\x8b" else ".zip" if magic == b"PK\x03\x04" else ".tar"
    platform.audit(principal.name, "submission.entry", sid)
    return path, f"{sid}-entry{suffix}"
