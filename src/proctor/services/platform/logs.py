"""An organizer's view of a submission's logs: why a scoring program (or the platform) failed.

The run artifact each job keeps holds the organizer's files (``executor.run``); this reads the
text ones back: ``score-error.txt`` (a scorer's traceback, a scoring program's reason),
``scoring-TASK.log`` (a scoring program's warnings and stdout/stderr tails) and
``platform-error.txt``. They may quote hidden references: organizers only; anyone else gets
the same "no such submission" as for a submission they cannot see.
"""

from __future__ import annotations

import tarfile

from sqlalchemy import select

from proctor.errors import NotFoundError
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import SubmissionLogs, TaskLogs
from proctor.services.platform.resources import Platform
from proctor.services.platform.submission_ids import full_id
from proctor.store.models import Job, Result, SubmissionRow

LOG_FILES = ("score-error.txt", "platform-error.txt")
MAX_LOG_CHARS = 64 * 1024


def submission_logs(platform: Platform, principal: Principal | None, sid: str) -> SubmissionLogs:
    """Each task's state, result status and organizer logs (``{name: text}``) of ``sid``."""
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
        tasks = [
            TaskLogs(
                task=job.task,
                state=str(job.state),
                status=result.status if result is not None else None,
                logs=_logs(platform, job.task, result.run_artifact if result else None),
            )
            for job, result in found
        ]
    return SubmissionLogs(submission=sid, challenge=row.challenge, phase=row.phase, tasks=tasks)


def _logs(platform: Platform, task: str, artifact: str | None) -> dict[str, str]:
    """The organizer's text logs of one job's run artifact (each capped, its tail kept)."""
    if artifact is None or not platform.artifacts.has(artifact):
        return {}
    wanted = (*LOG_FILES, f"scoring-{task}.log")
    found: dict[str, str] = {}
    with tarfile.open(platform.artifacts.path(artifact), "r:gz") as tar:
        for member in tar.getmembers():
            if member.name in wanted and member.isfile():
                stream = tar.extractfile(member)
                if stream is not None:
                    text = stream.read().decode("utf-8", errors="replace")
                    found[member.name] = text[-MAX_LOG_CHARS:]
    return found
