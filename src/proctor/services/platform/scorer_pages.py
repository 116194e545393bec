"""A scorer's own page for a submission (a Codabench program's ``detailed_results.html``).

The page is HTML written by the organizer's program after it read the hidden references, and
it can quote what the entry wrote: text from a process that saw hidden data, shaped in part
by the participant. Who reads it:

- organizers, always (the console's record);
- the submission's team only when its phase shows everything the score stage computed: the
  score stage disclosed at ``full`` *and* per-case values at ``per_record: full`` (the page
  can carry at least as much as every per-case value), or the score stage at ``full`` where
  the organizer chose ``detailed_results: scores`` (an imported Codabench bundle's
  ``enable_detailed_results``), no Ladder board in the phase (there
  the team sees only the Ladder's value), and only for a submission that counts (a free one
  shows nothing scored) and a task that was scored;
- anyone else: "not found", as for a page that does not exist.

The web face serves it from an address of its own, in a sandbox (``docs/security.md``).
A page over ``MAX_PAGE_BYTES`` is not served (``ScorerPage.html`` None): the organizer finds
it in the run artifact.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from proctor.errors import NotFoundError
from proctor.services.platform.accounts import Principal
from proctor.services.platform.installs import version_of
from proctor.services.platform.ladder_view import ladder_boards
from proctor.services.platform.quota import submission_counts
from proctor.services.platform.resources import Platform
from proctor.services.platform.run_files import kept_files
from proctor.services.platform.submission_ids import full_id
from proctor.services.platform.submissions import visible_submission
from proctor.spec import Challenge
from proctor.store.models import Job, Result
from proctor.store.runfolder import SCORER_PAGES, scorer_page_name
from proctor.types import Disclosure

MAX_PAGE_BYTES = 4 * 1024**2
DETAILED = SCORER_PAGES[0]


@dataclass(frozen=True, slots=True)
class ScorerPage:
    """A scorer's page of one task: its size and its HTML (None: larger than it is served)."""

    task: str
    size: int
    html: bytes | None


def team_may_read(challenge: Challenge, phase: str) -> bool:
    """Whether a phase's disclosure lets a team read its submissions' scorer pages."""
    policy = challenge.disclosure_for(challenge.phase(phase))
    with_scores = policy.detailed_results == "scores"
    return (
        policy.score is Disclosure.FULL
        and (with_scores or policy.per_record == "full")
        and not ladder_boards(challenge, phase)
    )


def readable_tasks(platform: Platform, principal: Principal | None, sid: str) -> list[str]:
    """The tasks of submission ``sid`` with detailed results the caller may read.

    The submission's page frames each; 404 for a submission the caller cannot see.
    """
    sid = full_id(platform, principal, sid)
    with platform.db() as session:
        jobs = _readable_jobs(session, principal, sid)
    found = []
    for job, result in jobs:
        name = scorer_page_name(job.task, DETAILED)
        if kept_files(platform, result.run_artifact, {name}, 0):
            found.append(job.task)
    return found


def detailed_page(
    platform: Platform, principal: Principal | None, sid: str, task: str
) -> ScorerPage:
    """Task ``task``'s detailed results of submission ``sid``.

    Only for a caller who may read them (module docstring): ``NotFoundError`` otherwise, and
    when there are none.
    """
    missing = NotFoundError(f"no detailed results of task {task!r} of submission {sid!r}")
    sid = full_id(platform, principal, sid)
    with platform.db() as session:
        jobs = _readable_jobs(session, principal, sid)
    artifact = next((result.run_artifact for job, result in jobs if job.task == task), None)
    name = scorer_page_name(task, DETAILED)
    kept = kept_files(platform, artifact, {name}, MAX_PAGE_BYTES).get(name)
    if kept is None:
        raise missing
    return ScorerPage(task, kept.size, kept.data)


def _readable_jobs(
    session: Session, principal: Principal | None, sid: str
) -> list[tuple[Job, Result]]:
    """The submission's jobs (with results) whose pages the caller may read."""
    row = visible_submission(session, principal, sid)  # 404 for another team's
    joined = select(Job, Result).join(Result, Result.job_id == Job.id)
    found = [
        (job, result) for job, result in session.execute(joined.where(Job.submission_id == sid))
    ]
    if principal is not None and principal.organizer:
        return found
    challenge = version_of(session, row.challenge_id)
    if not team_may_read(challenge, row.phase) or not submission_counts(session, row):
        return []
    return [(job, result) for job, result in found if result.status == "scored"]
