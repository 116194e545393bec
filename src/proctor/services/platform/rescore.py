"""Rescore a phase with a preview: what would change is shown before anything changes.

After an updated bundle was installed (a fixed metric, corrected references), an organizer
asks for a *preview*: every scored job of the phase is scored again from its kept outputs
(``rescore_jobs``), the new scores are tried in a transaction that is rolled back (to read
the default board's ranks as they would be), and the diff is kept as a ``RescorePreview``
row: each metric ``old → new`` per submission and task, the jobs that could not be rescored
with the reason, the rank moves. Nothing else changes.

*Applying* the preview stores exactly the previewed numbers, in one transaction, only while
they still hold: the same bundle version is installed and every job of the phase is in the
state the preview read (the same jobs scored, none scored since, none scored again). Else it
is refused (409, saying what changed) and the preview stays, so previewing again scores only
the jobs that changed (unchanged ones keep their computed scores). *Cancelling* drops it.

``rescore`` does both at once (the CLI without ``--dry-run``, the REST route without
``/preview``): it previews and applies, previewing again (only what changed) when a result
landed meanwhile.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import TypedDict

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from proctor.errors import NotFoundError, RefusedError
from proctor.scoring.base import TaskScores
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import RescoreCancelled, Rescored, RescoredJob
from proctor.services.platform.console import organizers_only
from proctor.services.platform.installs import current
from proctor.services.platform.quota import iso
from proctor.services.platform.rescore_jobs import (
    Kept,
    changes,
    job_states,
    rank_changes,
    ranks,
    score_again,
    scored_jobs,
    store,
)
from proctor.services.platform.resources import Platform
from proctor.services.platform.standings import phase_of
from proctor.spec import Challenge, Phase
from proctor.store.models import RescorePreview
from proctor.wording import noun, plural

ATTEMPTS = 3
"""How many times ``rescore`` previews again when results land while it scores."""


class ComputedJob(TypedDict):
    """A job's scores as a preview computed them, kept as JSON with the preview."""

    state: str
    summary: dict[str, float]
    per_record: dict[str, dict[str, float]]
    error: str | None


Computed = dict[str, ComputedJob]
"""Job id (text) → its computed scores (a preview's ``jobs``)."""


def preview(
    platform: Platform, principal: Principal, challenge_name: str, phase_name: str | None
) -> Rescored:
    """Score the phase again and keep the diff as a preview (organizers); nothing else changes.

    The answer is ``rescore``'s with ``preview`` (its id), ``applied`` False and ``created``.
    It replaces the phase's last preview, whose computed scores it reuses for
    jobs in the same state (same bundle version).
    """
    organizers_only(principal)
    version, challenge = current(platform, challenge_name)
    phase = phase_of(challenge, phase_name)
    with platform.db() as session:
        kept = scored_jobs(session, challenge, phase)
        states = job_states(session, kept)
        earlier = _earlier(session, challenge, phase, version.version)
    computed = {
        str(job.job_id): _compute(platform, challenge, job, states, earlier) for job in kept
    }
    jobs, after_ranks, before_ranks = _trial(
        platform, challenge, phase, kept, computed, version.version
    )
    ident = secrets.token_hex(8)
    answer = Rescored(
        preview=ident,
        applied=False,
        created=iso(time.time()),
        challenge=challenge.name,
        phase=phase.name,
        challenge_version=version.version,
        rescored=sum(1 for job in jobs if job.error is None),
        changed=sum(1 for job in jobs if job.changes),
        jobs=jobs,
        rank_changes=rank_changes(before_ranks, after_ranks),
    )
    _keep(platform, principal, ident, answer, computed)
    return answer


def shown_preview(
    platform: Platform, principal: Principal, challenge_name: str, preview_id: str
) -> Rescored:
    """A kept preview's answer (organizers), as ``preview`` gave it."""
    organizers_only(principal)
    with platform.db() as session:
        row = _row(session, challenge_name, preview_id)
        return Rescored.model_validate_json(row.answer)


def apply(
    platform: Platform, principal: Principal, challenge_name: str, preview_id: str
) -> Rescored:
    """Store the preview's scores (organizers); its answer with ``applied`` True.

    Refused (``RefusedError``, nothing stored, the preview kept) when its numbers no longer
    hold: another bundle version is installed, or a job of the phase was scored, scored
    again or withdrawn since the preview.
    """
    organizers_only(principal)
    answer, stale = _apply(platform, challenge_name, preview_id)
    if stale:
        raise RefusedError(
            f"rescore preview {preview_id} of {challenge_name}/{answer.phase} no longer "
            f"holds: {stale}; preview the rescore again (jobs unchanged since keep their "
            "computed scores)"
        )
    platform.audit(
        principal.name,
        "rescore",
        f"{answer.challenge}/{answer.phase}",
        f"v{answer.challenge_version} preview {preview_id}: {answer.changed} changed",
    )
    return answer.model_copy(update={"applied": True})


def cancel(
    platform: Platform, principal: Principal, challenge_name: str, preview_id: str
) -> RescoreCancelled:
    """Drop a preview without applying it (organizers)."""
    organizers_only(principal)
    with platform.db.begin() as session:
        row = _row(session, challenge_name, preview_id)
        phase = row.phase
        session.delete(row)
    platform.audit(principal.name, "rescore.cancel", f"{challenge_name}/{phase}", preview_id)
    return RescoreCancelled(
        challenge=challenge_name, phase=phase, preview=preview_id, cancelled=True
    )


def rescore(
    platform: Platform, principal: Principal, challenge_name: str, phase_name: str | None
) -> Rescored:
    """Preview and apply at once (organizers); the applied answer (see ``apply``)."""
    for _ in range(ATTEMPTS):
        shown = preview(platform, principal, challenge_name, phase_name)
        try:
            return apply(platform, principal, challenge_name, shown.preview)
        except RefusedError:
            continue  # a result landed while it scored: again, scoring only what changed
    raise RefusedError(
        f"the phase's results kept changing while it was rescored ({ATTEMPTS} tries): "
        "rescore again when fewer submissions are being evaluated"
    )


def _earlier(session: Session, challenge: Challenge, phase: Phase, version: int) -> Computed:
    """The phase's last preview's computed scores, if made with the same bundle version."""
    row = session.scalar(
        select(RescorePreview).where(
            RescorePreview.challenge == challenge.name,
            RescorePreview.phase == phase.name,
            RescorePreview.challenge_version == version,
        )
    )
    return {} if row is None else dict(json.loads(row.jobs))


def _compute(
    platform: Platform, challenge: Challenge, job: Kept, states: dict[str, str], earlier: Computed
) -> ComputedJob:
    """The job's new scores (or why not), reused from ``earlier`` when its state is the same."""
    key = str(job.job_id)
    if key in earlier and earlier[key]["state"] == states[key]:
        return earlier[key]
    try:
        scored = score_again(platform, challenge, job)
    except Exception as err:  # a scorer's failure is reported, the old scores stay
        return ComputedJob(state=states[key], summary={}, per_record={}, error=f"{err}")
    return ComputedJob(
        state=states[key],
        summary=scored.summary,
        per_record=scored.per_record,
        error=None,
    )


def _scores(computed: ComputedJob) -> TaskScores:
    return TaskScores(computed["summary"], computed["per_record"])


def _trial(  # noqa: PLR0917 - the phase, its jobs and their new scores
    platform: Platform,
    challenge: Challenge,
    phase: Phase,
    kept: list[Kept],
    computed: Computed,
    version: int,
) -> tuple[list[RescoredJob], dict[str, tuple[str, float]], dict[str, tuple[str, float]]]:
    """Each job's diff and the default board's ranks after and before.

    The new scores are stored in a transaction that is rolled back, so the board is read
    exactly as applying would make it.
    """
    jobs = []
    with platform.db() as session:
        before = ranks(session, challenge, phase)
        for job in kept:
            found = computed[str(job.job_id)]
            which = {"submission": job.submission, "team": job.team, "task": job.task}
            if found["error"] is not None:
                error = f"not rescored: {found['error']}"
                jobs.append(RescoredJob(**which, changes={}, error=error))
                continue
            scored = _scores(found)
            old = store(session, challenge, phase, job, scored, version=version)
            moved = changes(challenge, job, old, scored)
            jobs.append(RescoredJob(**which, changes=moved, error=None))
        after = ranks(session, challenge, phase)
        session.rollback()
    return jobs, after, before


def _keep(
    platform: Platform, principal: Principal, ident: str, answer: Rescored, jobs: Computed
) -> None:
    """Keep the preview, replacing the phase's last one."""
    with platform.db.begin() as session:
        session.execute(
            delete(RescorePreview).where(
                RescorePreview.challenge == answer.challenge,
                RescorePreview.phase == answer.phase,
            )
        )
        session.add(
            RescorePreview(
                id=ident,
                challenge=answer.challenge,
                phase=answer.phase,
                challenge_version=answer.challenge_version,
                jobs=json.dumps(jobs),
                answer=answer.model_dump_json(),
                created=time.time(),
                created_by=principal.name,
            )
        )
    platform.audit(
        principal.name,
        "rescore.preview",
        f"{answer.challenge}/{answer.phase}",
        f"v{answer.challenge_version} preview {ident}: {answer.changed} would change",
    )


def _row(session: Session, challenge_name: str, preview_id: str) -> RescorePreview:
    row = session.get(RescorePreview, preview_id)
    if row is None or row.challenge != challenge_name:
        raise NotFoundError(
            f"no rescore preview {preview_id!r} of {challenge_name!r}: it was applied, "
            "cancelled or replaced by a newer preview of its phase"
        )
    return row


class _StaleError(Exception):
    """The preview no longer holds (its message says why): its transaction rolls back."""


def _apply(platform: Platform, challenge_name: str, preview_id: str) -> tuple[Rescored, str | None]:
    """Store the preview's scores when they still hold, in one transaction; (answer, why not)."""
    version, challenge = current(platform, challenge_name)
    with platform.db() as session:
        answer = Rescored.model_validate_json(_row(session, challenge_name, preview_id).answer)
    try:
        with platform.db.begin() as session:
            _store_preview(session, challenge, version.version, preview_id)
    except _StaleError as stale:
        return answer, str(stale)
    return answer, None


def _store_preview(session: Session, challenge: Challenge, version: int, preview_id: str) -> None:
    """Claim the preview (deleted), check it still holds (``_StaleError``), store its scores."""
    row = _row(session, challenge.name, preview_id)
    if row.challenge_version != version:
        raise _StaleError(f"version {version} of the bundle was installed since")
    computed: Computed = json.loads(row.jobs)
    phase = phase_of(challenge, row.phase)
    # the claim first: concurrent applies of one preview store it once (a write lock on
    # SQLite from here on: results committed meanwhile wait for this transaction)
    claimed = session.execute(delete(RescorePreview).where(RescorePreview.id == row.id))
    if claimed.rowcount != 1:  # type: ignore[attr-defined]
        raise NotFoundError(f"rescore preview {preview_id!r} was applied meanwhile")
    kept = scored_jobs(session, challenge, phase)
    stale = _what_changed(computed, job_states(session, kept))
    if stale:
        raise _StaleError(stale)
    for job in kept:
        found = computed[str(job.job_id)]
        if found["error"] is None:
            store(session, challenge, phase, job, _scores(found), version=version)


def _what_changed(computed: Computed, now: dict[str, str]) -> str | None:
    """What differs between the jobs a preview read and the phase's jobs now (None: nothing)."""
    new = sorted(set(now) - set(computed), key=int)
    gone = sorted(set(computed) - set(now), key=int)
    again = sorted((j for j in now if j in computed and computed[j]["state"] != now[j]), key=int)
    said = [
        f"{plural(len(jobs), 'job')} {what} since ({noun(len(jobs), 'job')} {', '.join(jobs[:5])})"
        for jobs, what in (
            (new, "scored"),
            (again, "scored again"),
            (gone, "no longer scored or cancelled"),
        )
        if jobs
    ]
    return "; ".join(said) or None
