"""A leaderboard: rank entries on each task's primary metric, then order them by mean rank.

This is the ChaLearn AutoML convention (AutoWSL): per-task ranks with ties sharing the average
rank, a missing result ranking worst, and the mean of those ranks deciding the order. With one
task it reduces to ordering by that task's score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from proctor.metrics.ranking import mean_rank, rank_scores, rank_table


@dataclass(frozen=True, slots=True)
class Standing:
    """One row: the entry's overall rank, its per-task scores and ranks, and its mean rank."""

    rank: float
    entry: str
    scores: dict[str, float]
    task_ranks: dict[str, float]
    mean_rank: float


def build_leaderboard(
    results: Mapping[str, Mapping[str, float]],
    *,
    tasks: Sequence[str],
    higher_is_better: bool = True,
) -> list[Standing]:
    """Rank ``results`` (entry → task → primary score) best first.

    A task an entry has no (or a NaN) score on counts as its worst rank there.
    """
    entries = list(results)
    if not entries:
        return []
    table = np.array(
        [[results[e].get(t, math.nan) for t in tasks] for e in entries], dtype=np.float64
    )
    ranks = rank_table(table, higher_is_better=higher_is_better)
    means = mean_rank(table, higher_is_better=higher_is_better)
    overall = rank_scores(means, higher_is_better=False)
    rows = [
        Standing(
            rank=float(overall[i]),
            entry=entry,
            scores={t: float(table[i, j]) for j, t in enumerate(tasks)},
            task_ranks={t: float(ranks[i, j]) for j, t in enumerate(tasks)},
            mean_rank=float(means[i]),
        )
        for i, entry in enumerate(entries)
    ]
    return sorted(rows, key=lambda row: (row.rank, row.entry))
