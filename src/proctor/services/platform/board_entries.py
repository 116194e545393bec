"""The scored submissions of a phase as the boards read them, built from the store.

Each scored task result of a submission that may show results (not cancelled, not refunded,
no task failed by the platform: ``quota.shows_results``) becomes part of one
:class:`proctor.leaderboard.ScoredSubmission`: its scores per task and metric (only the
metrics the task reports), per-case values of the metrics that are the mean of their cases
(the bootstrap resamples them; a gross metric such as AUPRC keeps no interval), whether it is
a final entry (chosen; when its team chose none, its last ``final_entries`` scored), and what
its team published.

Publication unit: a task, or one *part* of it. A part ``P`` of task ``T`` is a suffix shared by
some of ``T``'s metrics (``dice_liver``, ``avgdist_liver`` … are the part ``liver``), which is
how VISCERAL's participants published per organ while a task is a modality. A
``best_published`` board sees, per submission, only the metrics published (the whole task, or
the metrics of its published parts), and counts a task as published when its ranking metric is.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import ColumnElement, Select, select
from sqlalchemy.orm import Session

from proctor.leaderboard import ScoredSubmission
from proctor.services.platform.quota import shows_results
from proctor.spec import Challenge, Phase
from proctor.store.models import (
    CaseResult,
    FinalChoice,
    Job,
    Publication,
    Result,
    Score,
    SubmissionRow,
    Team,
)
from proctor.types import JobState


@dataclass(frozen=True, slots=True)
class Scope:
    """The phase's scored jobs and their submissions, as subqueries (no long id lists)."""

    jobs: Select[tuple[int]]
    submissions: Select[tuple[str]]


WHOLE_TASK = ""
"""The part that stands for a whole task's publication."""
MEAN_TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """A scored submission as stored: what every board ranks, and its published parts."""

    scored: ScoredSubmission
    parts: Mapping[str, frozenset[str]]

    def published_view(self, rank_metric: str) -> ScoredSubmission:
        """The submission as a ``best_published`` board ranking ``rank_metric`` sees it."""
        scores: dict[str, dict[str, float]] = {}
        for task, parts in self.parts.items():
            shown = {
                metric: value
                for metric, value in self.scored.scores.get(task, {}).items()
                if metric_published(metric, parts)
            }
            if shown:
                scores[task] = shown
        published = frozenset(
            task for task, parts in self.parts.items() if metric_published(rank_metric, parts)
        )
        cases = {t: v for t, v in self.scored.case_values.items() if t in scores}
        return dataclasses.replace(
            self.scored, scores=scores, case_values=cases, published=published
        )


def metric_published(metric: str, parts: frozenset[str]) -> bool:
    """True when ``metric`` shows under the published ``parts`` of its task."""
    return WHOLE_TASK in parts or _part_of(metric) in parts


def _part_of(metric: str) -> str:
    """The part a metric names: what follows its first ``_`` ("" for none)."""
    return metric.partition("_")[2]


def task_parts(metrics: Sequence[str]) -> list[str]:
    """The parts a task's metrics name (the suffix after a first ``_``), in first-seen order.

    ``dice_kidney_left`` names ``kidney_left``; a metric without ``_`` names none. A part is
    offered only when at least two metrics share it (a family of per-part metrics).
    """
    counts: dict[str, int] = defaultdict(int)
    for metric in metrics:
        if _part_of(metric):
            counts[_part_of(metric)] += 1
    return [part for part, count in counts.items() if count >= 2]


def _in_phase(challenge: Challenge, phase: Phase) -> tuple[ColumnElement[bool], ...]:
    """The conditions of a scored job of a submission of ``phase`` that may show results.

    Not cancelled, and counting against its quota (``quota.shows_results``): a submission
    that was refunded or that the platform failed is on no board.
    """
    return (
        SubmissionRow.challenge == challenge.name,
        SubmissionRow.phase == phase.name,
        shows_results(),
        Job.state == JobState.DONE,
        Result.status == "scored",
    )


def stored_entries(
    session: Session, challenge: Challenge, phase: Phase, *, with_hidden: bool = False
) -> list[StoredEntry]:
    """Every submission of ``phase`` with at least one scored task, oldest first.

    The organizers' test submissions (a hidden team's) only ``with_hidden``.
    """
    joined = (
        select(SubmissionRow, Team.name, Job.id, Job.task)
        .join(Team, Team.id == SubmissionRow.team_id)
        .join(Job, Job.submission_id == SubmissionRow.id)
        .join(Result, Result.job_id == Job.id)
        .where(*_in_phase(challenge, phase), *(() if with_hidden else (~Team.hidden,)))
    )
    rows = session.execute(joined).all()
    scope = Scope(
        jobs=joined.with_only_columns(Job.id),
        submissions=joined.with_only_columns(SubmissionRow.id),
    )
    jobs = {job_id: (sub.id, task) for sub, _, job_id, task in rows if task in phase.tasks}
    scores = _scores(session, challenge, jobs, scope)
    cases = _case_values(session, jobs, scores, scope)
    parts = _published_parts(session, scope)
    subs = {sub.id: (sub, team) for sub, team, _, _ in rows}
    finals = _finals(session, [sub for sub, _ in subs.values()], phase.final_entries, scope)
    entries = [
        StoredEntry(
            ScoredSubmission(
                submission=sid,
                team=team,
                submitted_at=datetime.fromtimestamp(sub.created, tz=UTC),
                scores=scores.get(sid, {}),
                case_values=cases.get(sid, {}),
                final=sid in finals,
            ),
            parts.get(sid, {}),
        )
        for sid, (sub, team) in subs.items()
    ]
    return sorted(entries, key=lambda e: e.scored.order_key)


Nested = dict[str, dict[str, dict[str, float]]]


def _scores(
    session: Session, challenge: Challenge, jobs: Mapping[int, tuple[str, str]], scope: Scope
) -> Nested:
    """Submission → task → metric → value, for the metrics each task reports (NaN: missing)."""
    found: Nested = defaultdict(dict)
    for job_id, metric, value in session.execute(
        select(Score.job_id, Score.metric, Score.value).where(Score.job_id.in_(scope.jobs))
    ):
        if job_id not in jobs:
            continue
        sid, task = jobs[job_id]
        if metric in challenge.task(task).reported_metrics:
            found[sid].setdefault(task, {})[metric] = math.nan if value is None else value
    return found


def _case_values(
    session: Session, jobs: Mapping[int, tuple[str, str]], scores: Nested, scope: Scope
) -> dict[str, dict[str, dict[str, list[float]]]]:
    """Per-case values of the metrics whose score is the mean of their finite cases."""
    raw: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(dict)
    for job_id, metric, value in session.execute(
        select(CaseResult.job_id, CaseResult.metric, CaseResult.value)
        .where(CaseResult.job_id.in_(scope.jobs))
        .order_by(CaseResult.job_id, CaseResult.case)
    ):
        if job_id not in jobs:
            continue
        sid, task = jobs[job_id]
        if metric in scores.get(sid, {}).get(task, {}) and value is not None:
            raw[sid].setdefault(task, {}).setdefault(metric, []).append(value)
    kept: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(dict)
    for sid, tasks in raw.items():
        for task, metrics in tasks.items():
            for metric, values in metrics.items():
                score = scores[sid][task][metric]
                if math.isfinite(score) and abs(sum(values) / len(values) - score) <= max(
                    MEAN_TOLERANCE, MEAN_TOLERANCE * abs(score)
                ):
                    kept[sid].setdefault(task, {})[metric] = values
    return kept


def _published_parts(session: Session, scope: Scope) -> dict[str, dict[str, frozenset[str]]]:
    """Submission → task → the parts it currently publishes ("" for the whole task)."""
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for sid, task, part in session.execute(
        select(Publication.submission_id, Publication.task, Publication.part).where(
            Publication.submission_id.in_(scope.submissions), Publication.published.is_(True)
        )
    ):
        found[sid][task].add(part)
    return {
        sid: {task: frozenset(parts) for task, parts in tasks.items()}
        for sid, tasks in found.items()
    }


def _finals(session: Session, subs: Sequence[SubmissionRow], count: int, scope: Scope) -> set[str]:
    """The final entries: each team's chosen ones, else its last ``count`` scored."""
    chosen = set(
        session.scalars(
            select(FinalChoice.submission_id).where(
                FinalChoice.submission_id.in_(scope.submissions)
            )
        )
    )
    by_team: dict[int, list[SubmissionRow]] = defaultdict(list)
    for sub in sorted(subs, key=lambda s: (s.created, s.id)):
        by_team[sub.team_id].append(sub)
    finals: set[str] = set()
    for team_subs in by_team.values():
        mine = {s.id for s in team_subs if s.id in chosen}
        finals |= mine or {s.id for s in team_subs[-count:]}
    return finals
