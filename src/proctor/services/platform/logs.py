"""An organizer's view of a submission's logs: why a task failed, and what its runs printed.

The run artifact each job keeps holds the organizer's files (``executor.run``); this reads the
text ones back: ``score-error.txt`` (a scorer's traceback, a scoring program's reason),
``scoring-TASK.log`` (a scoring program's warnings and stdout/stderr tails),
``platform-error.txt``, and from ``cases.jsonl`` the setup output and each failed stage's and
failing case's output tails (``diagnostics``), as the console's record shows them, capped and
the cap said; and the entry's own image it ran in (``entry-image.json``, ``image_facts``).
They may quote hidden references: organizers only; anyone else gets the same "no such
submission" as for a submission they cannot see.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from proctor.errors import NotFoundError
from proctor.services.platform import diagnostics, image_facts
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import SubmissionLogs, TaskLogs
from proctor.services.platform.diagnostics import MAX_LOG_CHARS
from proctor.services.platform.resources import Platform
from proctor.services.platform.run_files import KeptFile, kept_files
from proctor.services.platform.submission_ids import full_id
from proctor.store.models import Job, Result, SubmissionRow
from proctor.store.runfolder import ENTRY_IMAGE_RECORD

LOG_FILES = ("score-error.txt", "platform-error.txt")
MAX_CASES_BYTES = 256 * 1024**2
"""A ``cases.jsonl`` larger than this is not read (its diagnostics are then left out)."""

__all__ = ["LOG_FILES", "MAX_LOG_CHARS", "submission_logs"]


def submission_logs(platform: Platform, principal: Principal | None, sid: str) -> SubmissionLogs:
    """Each task's state, result status, reason, logs and diagnostics (``{name: text}``)."""
    if principal is None or not principal.organizer:
        raise NotFoundError(f"no submission {sid!r}")
    sid = full_id(platform, principal, sid)
    with platform.db() as session:
        row = session.get(SubmissionRow, sid)
        if row is None:
            raise NotFoundError(f"no submission {sid!r}")
        found = session.execute(
            select(Job, Result)
            .outerjoin(Result, Result.job_id == Job.id)
            .where(Job.submission_id == sid)
            .order_by(Job.id)
        ).all()
        tasks = [_task(platform, job, result) for job, result in found]
    return SubmissionLogs(submission=sid, challenge=row.challenge, phase=row.phase, tasks=tasks)


def _task(platform: Platform, job: Job, result: Result | None) -> TaskLogs:
    """One task's logs, its diagnostics and, when it failed, its reason."""
    status = result.status if result is not None else None
    logs, lines, image = _logs(platform, job.task, result.run_artifact if result else None)
    shown, failing = diagnostics.diagnostics(lines)
    reason = (
        diagnostics.reason(job.task, job.failure, job.stage, logs, lines)
        if diagnostics.failed(job.failure, status, str(job.state))
        else None
    )
    return TaskLogs(
        task=job.task,
        state=str(job.state),
        status=status,
        reason=reason,
        logs=logs,
        diagnostics=shown,
        cap=diagnostics.cap_words(failing),
        image=image_facts.facts(image),
    )


def _logs(
    platform: Platform, task: str, artifact: str | None
) -> tuple[dict[str, str], list[dict[str, Any]], dict[str, KeptFile]]:
    """A run artifact's organizer logs, ``cases.jsonl``'s lines, the entry image's record.

    Each log is capped (its tail kept); the image's record is there when it ran in one.
    """
    wanted = (*LOG_FILES, f"scoring-{task}.log", "cases.jsonl", ENTRY_IMAGE_RECORD)
    found = kept_files(platform, artifact, wanted, MAX_CASES_BYTES)
    image = {name: found.pop(name) for name in (ENTRY_IMAGE_RECORD,) if name in found}
    texts = {n: (k.data or b"").decode("utf-8", errors="replace") for n, k in found.items()}
    cases = texts.pop("cases.jsonl", "")
    lines = [json.loads(line) for line in cases.splitlines() if line]
    return {n: t[-MAX_LOG_CHARS:] for n, t in texts.items()}, lines, image
