"""Compute a declared board from scored submissions: select, rank, bootstrap.

Ranking (every aggregation): each task ranks the rows on the board's first metric in that
metric's direction, ties sharing the average rank and a missing result ranking worst
(:mod:`proctor.metrics.ranking`); a row's ``mean_rank`` is the mean of its task ranks, and its
``rank`` orders the mean ranks (ties share again). With one task this is the task's order.

Selection, by the board's declaration (:class:`proctor.spec.leaderboards.BoardSpec`):

* ``only_final``: only submissions chosen (or defaulted) as final entries;
* ``per: submission``: every submission is a row;
* ``per: team``: all submissions are ranked together, then each team keeps its row with the
  lowest mean rank (the earliest submission on a tie) and those rows are ranked again;
* ``best_published``: results count only on tasks their team published, each task from the
  team's best such result (``per: submission``: each submission with its published tasks);
* a ``ladder``: each team shows its Ladder values (:mod:`proctor.leaderboard.ladder`), and no
  interval (a bootstrap interval would disclose what the Ladder rounds away).

Rows come best first; equal ranks by submission time, then team. Deterministic for a seed,
whatever the order of the input.

Example (what :func:`compute_phase_board` does in one call)::

    board = find_board(challenge, "final", "default")          # proctor.spec.leaderboards
    result = compute_board(board, submissions, metric_directions(challenge),
                           challenge=challenge.name, phase="final")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from proctor.leaderboard.intervals import row_intervals
from proctor.leaderboard.ladder import laddered
from proctor.leaderboard.model import (
    Board,
    BoardInputError,
    BoardRow,
    RowIntervals,
    ScoredSubmission,
)
from proctor.leaderboard.selection import (
    Candidate,
    best_per_team,
    best_published,
    each_submission,
    eligible,
    published_each,
)
from proctor.metrics.ranking import rank_scores, rank_table
from proctor.spec.leaderboards import BoardSpec, find_board, metric_directions
from proctor.spec.model import Challenge
from proctor.types import Direction
from proctor.wording import noun

FloatArray = npt.NDArray[np.float64]


def compute_board(
    board: BoardSpec,
    submissions: Sequence[ScoredSubmission],
    directions: Mapping[str, Direction],
    *,
    challenge: str = "",
    phase: str = "",
    seed: int = 0,
    n_resamples: int = 1000,
) -> Board:
    """Rank ``submissions`` as ``board`` declares (tasks resolved, as ``phase_boards`` gives).

    ``directions`` maps each metric of the board to the way it improves
    (``spec.leaderboards.metric_directions``). Raises ``BoardInputError`` on a board without
    tasks, a metric without a rankable direction, or a submission id given twice.
    """
    higher = _check(board, submissions, directions)
    candidates = _candidates(board, eligible(submissions, only_final=board.only_final), higher)
    if not candidates:
        return _board(board, (), challenge, phase)
    points = _points(candidates, board)
    means, overall = _rank(points, higher)
    intervals: Sequence[RowIntervals | None] = [None] * len(candidates)
    if board.ladder is None:
        intervals = row_intervals(
            candidates,
            points,
            board.tasks,
            board.metrics,
            higher=higher,
            n_resamples=n_resamples,
            seed=seed,
        )
    rows = [
        _row(board, candidate, float(rank), float(mean), interval)
        for candidate, rank, mean, interval in zip(
            candidates, overall, means, intervals, strict=True
        )
    ]
    rows.sort(key=lambda r: (r.rank, r.submitted_at, r.team, r.submission))
    return _board(board, tuple(rows), challenge, phase)


def compute_phase_board(
    challenge: Challenge,
    phase: str | None,
    name: str,
    submissions: Sequence[ScoredSubmission],
    *,
    seed: int = 0,
    n_resamples: int = 1000,
) -> Board:
    """Board ``name`` of ``phase`` (the last when None) of ``challenge``, computed.

    Raises ``KeyError`` naming the phase's boards when ``phase`` or ``name`` is unknown.
    """
    return compute_board(
        find_board(challenge, phase, name),
        submissions,
        metric_directions(challenge),
        challenge=challenge.name,
        phase=challenge.phase(phase).name,
        seed=seed,
        n_resamples=n_resamples,
    )


def _check(
    board: BoardSpec, submissions: Sequence[ScoredSubmission], directions: Mapping[str, Direction]
) -> bool:
    """Refuse what cannot be ranked; return whether the ranking metric's higher is better."""
    if not board.tasks:
        raise BoardInputError(
            f"board {board.name!r} names no tasks: resolve it with spec.leaderboards.phase_boards"
        )
    missing = [metric for metric in board.metrics if metric not in directions]
    if missing:
        raise BoardInputError(
            f"no direction given for {noun(len(missing), 'metric')} {', '.join(missing)}"
        )
    direction = directions[board.rank_metric]
    if direction is Direction.NEUTRAL:
        raise BoardInputError(f"{board.rank_metric!r} is a count, not a score: it cannot rank")
    seen: set[str] = set()
    for submission in submissions:
        if submission.submission in seen:
            raise BoardInputError(f"submission {submission.submission!r} is given twice")
        seen.add(submission.submission)
    return direction.higher_is_better


def _candidates(
    board: BoardSpec, submissions: Sequence[ScoredSubmission], higher: bool
) -> list[Candidate]:
    """The rows to rank, per the board's aggregation, ``per`` and ladder."""
    tasks, metric = board.tasks, board.rank_metric
    if board.ladder is not None:
        return laddered(submissions, tasks, metric, step=board.ladder.step, higher=higher)
    if board.aggregation == "best_published":
        if board.per == "submission":
            return published_each(submissions, tasks)
        return best_published(submissions, tasks, metric, higher=higher)
    candidates = each_submission(submissions, tasks)
    if board.per == "submission" or not candidates:
        return candidates
    means, _ = _rank(_points(candidates, board), higher)
    return best_per_team(candidates, [float(m) for m in means])


def _points(candidates: Sequence[Candidate], board: BoardSpec) -> FloatArray:
    """Rows × tasks: each row's value of the ranking metric (NaN when missing)."""
    metric = board.rank_metric
    return np.array(
        [[c.value(task, metric, metric) for task in board.tasks] for c in candidates],
        dtype=np.float64,
    )


def _rank(points: FloatArray, higher: bool) -> tuple[FloatArray, FloatArray]:
    """Each row's mean rank over the tasks, and its overall rank (of the mean ranks)."""
    means = np.asarray(rank_table(points, higher_is_better=higher).mean(axis=1), dtype=np.float64)
    return means, rank_scores(means, higher_is_better=False)


def _row(
    board: BoardSpec,
    candidate: Candidate,
    rank: float,
    mean: float,
    interval: RowIntervals | None,
) -> BoardRow:
    """A board row from a ranked candidate, with only the results present."""
    scores: dict[str, dict[str, float]] = {}
    for task in board.tasks:
        for metric in board.metrics:
            value = candidate.value(task, metric, board.rank_metric)
            if not np.isnan(value):
                scores.setdefault(task, {})[metric] = value
    return BoardRow(
        rank=rank,
        team=candidate.team,
        submission=candidate.submission.submission,
        submitted_at=candidate.submission.submitted_at,
        scores=scores,
        mean_rank=mean,
        ci95=interval,
        sources={task: source.submission for task, source in candidate.sources.items()},
    )


def _board(board: BoardSpec, rows: tuple[BoardRow, ...], challenge: str, phase: str) -> Board:
    return Board(
        challenge=challenge,
        phase=phase,
        name=board.name,
        tasks=board.tasks,
        metrics=board.metrics,
        aggregation=board.aggregation,
        per=board.per,
        public=board.public,
        ladder_step=board.ladder.step if board.ladder else None,
        rows=rows,
        title=board.title,
    )
