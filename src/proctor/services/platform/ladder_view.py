"""A team's own report in a Ladder phase: only what the Ladder board shows of it.

The Ladder rounds a team's shown score and moves it only when beaten by more than its step;
the exact score in the team's own report would undo that. So for every task on a Ladder board
the team's report shows only the board's value as it stood once this submission was taken into
account (the Ladder over the team's results up to this one), under the board's one metric: no
other metric of that task, no per-record values, no interval, no exam figures, no dashboard.
"""

from __future__ import annotations

import dataclasses
import math

from sqlalchemy.orm import Session

from proctor.leaderboard import climb
from proctor.pipeline.report import EvaluationReport
from proctor.services.platform.board_entries import StoredEntry, stored_entries
from proctor.spec import Challenge
from proctor.spec.leaderboards import BoardSpec, metric_directions, phase_boards
from proctor.store.models import SubmissionRow, Team


def ladder_boards(challenge: Challenge, phase: str) -> list[BoardSpec]:
    """The phase's Ladder boards."""
    return [board for board in phase_boards(challenge, phase) if board.ladder is not None]


def _shown_values(
    challenge: Challenge, boards: list[BoardSpec], own: list[StoredEntry]
) -> dict[str, tuple[str, float, float]]:
    """Task → (metric, Ladder value after the last of ``own``, step); the coarsest board wins."""
    directions = metric_directions(challenge)
    shown: dict[str, tuple[str, float, float]] = {}
    for board in boards:
        step = board.ladder.step if board.ladder is not None else 0.0
        metric = board.rank_metric
        higher = directions[metric].higher_is_better
        for task in board.tasks:
            values = [entry.scored.score(task, metric) for entry in own]
            value = climb(values, step=step, higher=higher)[-1][0] if values else math.nan
            if task not in shown or step > shown[task][2]:
                shown[task] = (metric, value, step)
    return shown


def laddered_report(
    session: Session, challenge: Challenge, row: SubmissionRow, report: EvaluationReport
) -> EvaluationReport:
    """``report`` cut to what the phase's Ladder boards show of the submission's team."""
    boards = ladder_boards(challenge, row.phase)
    if not boards:
        return report
    team = session.get(Team, row.team_id)
    entries = stored_entries(session, challenge, challenge.phase(row.phase))
    own = [e for e in entries if team is not None and e.scored.team == team.name]
    index = next((i for i, e in enumerate(own) if e.scored.submission == row.id), None)
    shown = _shown_values(challenge, boards, own[: index + 1] if index is not None else [])
    scores = dict(report.scores)
    tasks = dict(report.tasks)
    for task, (metric, value, _) in shown.items():
        if task in scores:
            scores[task] = {metric: value}
        if task in tasks:
            tasks[task] = dataclasses.replace(
                tasks[task],
                scores=scores.get(task, {}),
                per_record=None,
                efficiency=None,
                dashboard=None,
            )
    cut = set(shown)
    return dataclasses.replace(
        report,
        scores=scores,
        tasks=tasks,
        per_record={t: v for t, v in report.per_record.items() if t not in cut},
        efficiency={t: v for t, v in report.efficiency.items() if t not in cut},
        dashboard={t: v for t, v in report.dashboard.items() if t not in cut},
    )
