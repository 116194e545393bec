"""Bootstrap 95% intervals of a board's scores and ranks, from stored per-case values.

Scores: for each task and metric, the rows that stored per-case values (of one common length:
the task's hidden cases) are resampled together, the same cases for every row (a paired
bootstrap), and each row's interval is the percentile interval of its mean.

Ranks: each resample redraws every task's cases (independently per task), recomputes each
row's ranking-metric mean, ranks the rows per task (ties averaged, missing worst), takes the
mean rank over tasks and ranks those: the interval is that overall rank's 2.5th and 97.5th
percentiles. A row without per-case values on a task keeps its point score in every resample.
A wide interval says the board's order is not settled by this test set.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from proctor.leaderboard.model import Interval, RowIntervals
from proctor.leaderboard.selection import Candidate
from proctor.metrics.ranking import bootstrap_aggregates, bootstrap_score_ci, rank_table

FloatArray = npt.NDArray[np.float64]
CONFIDENCE = 0.95


def _case_rows(candidates: Sequence[Candidate], task: str, metric: str) -> dict[int, FloatArray]:
    """Row index → per-case values of ``metric`` on ``task``, for the rows that can be paired.

    Only rows with the most common case count are kept (others cannot be paired with them);
    rows of only NaN values, or with an infinite one, are left out.
    """
    found: dict[int, FloatArray] = {}
    for index, candidate in enumerate(candidates):
        source = candidate.sources.get(task)
        values = np.asarray(source.cases(task, metric) if source else (), dtype=np.float64)
        if (
            values.size
            and not np.isnan(values).all()
            and np.isfinite(values[~np.isnan(values)]).all()
        ):
            found[index] = values
    if not found:
        return {}
    length = Counter(v.size for v in found.values()).most_common(1)[0][0]
    return {index: values for index, values in found.items() if values.size == length}


def _aggregate(matrix: FloatArray) -> Callable[..., Any]:
    """The mean, skipping NaN cases only when there are some (np.mean keeps the fast path)."""
    return np.nanmean if np.isnan(matrix).any() else np.mean


def score_intervals(
    candidates: Sequence[Candidate],
    tasks: Sequence[str],
    metrics: Sequence[str],
    *,
    n_resamples: int,
    seed: int,
    counts: list[dict[str, dict[str, int]]] | None = None,
) -> list[dict[str, dict[str, Interval]]]:
    """Per row: task → metric → interval of the mean of its per-case values.

    ``counts``, when given (one mapping per row), receives the number of cases (values not
    NaN) behind each interval, at the same task and metric.
    """
    found: list[dict[str, dict[str, Interval]]] = [{} for _ in candidates]
    for task in tasks:
        for metric in metrics:
            rows = _case_rows(candidates, task, metric)
            if not rows:
                continue
            matrix = np.vstack(list(rows.values()))
            with warnings.catch_warnings():  # a resample of only NaN cases has no mean
                warnings.simplefilter("ignore", RuntimeWarning)
                interval = bootstrap_score_ci(
                    matrix,
                    aggregate=_aggregate(matrix),
                    n_resamples=n_resamples,
                    confidence=CONFIDENCE,
                    seed=seed,
                )
            for position, index in enumerate(rows):
                low, high = float(interval.low[position]), float(interval.high[position])
                if not (np.isnan(low) or np.isnan(high)):  # resamples of only NaN cases
                    found[index].setdefault(task, {})[metric] = (low, high)
                    if counts is not None:
                        cases = int(np.count_nonzero(~np.isnan(rows[index])))
                        counts[index].setdefault(task, {})[metric] = cases
    return found


def rank_intervals(
    candidates: Sequence[Candidate],
    points: FloatArray,
    tasks: Sequence[str],
    metric: str,
    *,
    higher: bool,
    n_resamples: int,
    seed: int,
) -> list[Interval] | None:
    """Per row, the interval of its overall rank; None when no row stored per-case values.

    ``points`` is rows × tasks: the values the board ranked (NaN = missing).
    """
    rng = np.random.default_rng(seed)
    task_ranks = []
    resampled_any = False
    for column, task in enumerate(tasks):
        samples = np.repeat(points[:, column : column + 1], n_resamples, axis=1)
        rows = _case_rows(candidates, task, metric)
        if rows:
            resampled_any = True
            matrix = np.vstack(list(rows.values()))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                drawn = bootstrap_aggregates(
                    matrix, aggregate=_aggregate(matrix), n_resamples=n_resamples, seed=rng
                )
            samples[list(rows)] = drawn
        task_ranks.append(rank_table(samples, higher_is_better=higher))
    if not resampled_any:
        return None
    overall = rank_table(np.mean(task_ranks, axis=0), higher_is_better=False)
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(overall, [tail, 1.0 - tail], axis=1)
    return [(float(a), float(b)) for a, b in zip(low, high, strict=True)]


def row_intervals(
    candidates: Sequence[Candidate],
    points: FloatArray,
    tasks: Sequence[str],
    metrics: Sequence[str],
    *,
    higher: bool,
    n_resamples: int,
    seed: int,
) -> list[RowIntervals | None]:
    """Each row's intervals of scores and rank (None for a row with neither)."""
    counts: list[dict[str, dict[str, int]]] = [{} for _ in candidates]
    scores = score_intervals(
        candidates, tasks, metrics, n_resamples=n_resamples, seed=seed, counts=counts
    )
    ranks: Sequence[Interval | None] | None = rank_intervals(
        candidates, points, tasks, metrics[0], higher=higher, n_resamples=n_resamples, seed=seed
    )
    if ranks is None:
        ranks = [None] * len(candidates)
    return [
        RowIntervals(scores=own, rank=rank, cases=cases) if own or rank is not None else None
        for own, rank, cases in zip(scores, ranks, counts, strict=True)
    ]
