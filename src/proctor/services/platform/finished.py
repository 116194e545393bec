"""The "finished" mail: the uploader hears once when every job of their submission has ended.

Called by the worker after each committed result (``WorkerRuntime.job_committed``). The mail
says what the submission's page shows to its team (scored, failed, cancelled) and links it;
nothing more, so a mail never carries what the page would hide. Each person can switch it off
on their account page (``profile.finished_mail_to``). A flag on the submission, set in one
update, makes sure two workers finishing its last jobs at once send one mail.
"""

from __future__ import annotations

import logging

from sqlalchemy import select, update

from proctor.services.platform import mail
from proctor.services.platform.profile import finished_mail_to
from proctor.services.platform.resources import Platform
from proctor.store.models import Job, Result, SubmissionRow, User
from proctor.types import JobState

log = logging.getLogger(__name__)


def mail_if_finished(platform: Platform, job_id: int) -> bool:
    """After job ``job_id``'s commit: mail the uploader if its submission has ended; True if sent.

    Never raises for mail trouble: a worker's job is done whatever the mail server says.
    """
    if platform.settings.smtp is None:
        return False
    with platform.db() as session:
        job = session.get(Job, job_id)
        if job is None:
            return False
        submission = session.get(SubmissionRow, job.submission_id)
        if submission is None or submission.finished_mailed:
            return False
        states = session.execute(
            select(Job.state, Result.status)
            .outerjoin(Result, Result.job_id == Job.id)
            .where(Job.submission_id == submission.id)
        ).all()
        uploader = session.scalar(select(User.name).where(User.id == submission.user_id))
        challenge, phase = submission.challenge, submission.phase
    if uploader is None or not all(JobState(state).finished for state, _ in states):
        return False
    address = finished_mail_to(platform, uploader)
    if address is None or not _claim(platform, job.submission_id):
        return False
    word = _outcome([(JobState(state), status) for state, status in states])
    page = mail.link(platform.settings, f"/submissions/{job.submission_id}")
    body = (
        f"Your submission {job.submission_id} to {challenge} ({phase}) has finished: {word}.\n"
        f"See it at {page}\n\n"
        f"You get this mail because it is switched on in your account: "
        f"{mail.link(platform.settings, '/account')}\n"
    )
    try:
        mail.send(platform.settings, address, f"{challenge}: submission {word}", body)
    except (mail.MailHeaderError, mail.MailUnavailableError) as error:
        log.warning("finished mail for %s not sent: %s", job.submission_id, error)
        return False
    return True


def _claim(platform: Platform, submission: str) -> bool:
    """Mark ``submission`` as mailed; False when another worker marked it first."""
    with platform.db.begin() as session:
        changed = session.execute(
            update(SubmissionRow)
            .where(SubmissionRow.id == submission, SubmissionRow.finished_mailed.is_(False))
            .values(finished_mailed=True)
        )
        return bool(getattr(changed, "rowcount", 0))


def _outcome(states: list[tuple[JobState, str | None]]) -> str:
    """One word for the team: scored only when every task scored."""
    if all(state is JobState.DONE and status == "scored" for state, status in states):
        return "scored"
    if all(state is JobState.CANCELLED for state, _ in states):
        return "cancelled"
    if any(status == "dry_run" for _, status in states):
        return "checked (dry run)"
    return "failed"
