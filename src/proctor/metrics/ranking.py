"""Ranking participants: per-task ranks, rank aggregation and bootstrap confidence intervals.

Conventions (pure numpy; this module imports nothing of Proctor):

* A *score table* is participants × tasks: row ``i`` holds participant ``i``'s score on every
  task (an AutoWSL dataset, a VISCERAL organ...). Rank 1 is the best.
* Direction: ``higher_is_better=True`` ranks the largest score first (AUC, Dice);
  ``False`` ranks the smallest first (a distance, a duration). A table may mix directions with
  one flag per task.
* Ties share the average of the ranks they span (ChaLearn AutoML convention), so the ranks of
  one task always sum to ``n(n+1)/2``: scores 0.9, 0.8, 0.8, 0.7 → ranks 1, 2.5, 2.5, 4.
* Missing results are ``NaN``. **Policy: a missing result ranks worst.** All missing entries of
  a task tie among themselves below every present result and share the average of the worst
  ranks: scores 0.9, NaN, 0.7, NaN → ranks 1, 3.5, 2, 3.5. So a missing result never ranks
  first unless nobody has a result, and the rank sum stays ``n(n+1)/2``.
* Infinite scores are rejected: a metric that can be infinite must map that case to a documented
  finite value (EvaluateSegmentation's Hausdorff distance uses 1e8) or to NaN.

Example::

    >>> table = [[0.97, 0.93], [0.95, 0.93], [float("nan"), 0.90]]
    >>> mean_rank(table).tolist()
    [1.25, 1.75, 3.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from proctor.metrics._validation import MetricInputError

FloatArray = npt.NDArray[np.float64]
Aggregate = Callable[..., Any]
"""A reduction called as ``aggregate(values, axis=-1)`` (``np.mean``, ``np.median``, ...)."""

__all__ = [
    "BootstrapInterval",
    "bootstrap_aggregates",
    "bootstrap_rank_ci",
    "bootstrap_score_ci",
    "borda_count",
    "mean_rank",
    "median_rank",
    "rank_scores",
    "rank_table",
]

# Largest number of values the general bootstrap path materialises at once (32 MB of float64).
_CHUNK_VALUES = 4_000_000


def _as_scores(scores: npt.ArrayLike, *, ndim: int, name: str) -> FloatArray:
    """Check a numeric array of ``ndim`` dimensions without infinities; return it as float64."""
    try:
        array = np.asarray(scores)
    except (TypeError, ValueError) as error:  # ragged nested lists
        raise MetricInputError(f"{name} must be a rectangular numeric array: {error}") from error
    if array.dtype.kind not in "biuf":
        raise MetricInputError(
            f"{name} must hold numbers (dtype {array.dtype} given); mark a missing result as NaN"
        )
    if array.ndim != ndim:
        raise MetricInputError(f"{name} must be {ndim}-D, got shape {array.shape}")
    values = array.astype(np.float64)
    if np.isinf(values).any():
        raise MetricInputError(
            f"{name} holds an infinite value; map it to a finite value or to NaN (missing)"
        )
    return values


def _average_ranks(keys: FloatArray) -> FloatArray:
    """1-based ranks along the last axis, smallest key first; equal keys share the average rank."""
    n = keys.shape[-1]
    if n == 0:
        return np.empty_like(keys)
    order = np.argsort(keys, axis=-1, kind="stable")
    ordered = np.take_along_axis(keys, order, axis=-1)
    positions = np.broadcast_to(np.arange(n), keys.shape)
    edge = np.ones((*keys.shape[:-1], 1), dtype=bool)
    differs = ordered[..., 1:] != ordered[..., :-1]
    starts = np.concatenate([edge, differs], axis=-1)
    ends = np.concatenate([differs, edge], axis=-1)
    # First and last sorted position of every element's tie group, found without Python loops.
    first = np.maximum.accumulate(np.where(starts, positions, 0), axis=-1)
    last_reversed = np.flip(np.where(ends, positions, n - 1), axis=-1)
    last = np.flip(np.minimum.accumulate(last_reversed, axis=-1), axis=-1)
    ranks = np.empty_like(keys)
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=-1)
    return ranks


def _rank_rows(scores: FloatArray, higher_is_better: FloatArray | bool) -> FloatArray:
    """Rank each row of ``scores`` (best first); NaN entries rank worst and tie among themselves."""
    sign = np.where(higher_is_better, -1.0, 1.0)
    keys = np.where(np.isnan(scores), np.inf, sign * scores)
    return _average_ranks(keys)


def rank_scores(scores: npt.ArrayLike, *, higher_is_better: bool = True) -> FloatArray:
    """Rank the participants of one task: 1 is best, ties share the average rank.

    ``scores`` is 1-D, one score per participant; NaN marks a missing result, which ranks worst
    (see the module docstring). Returns float ranks (ties give halves), same length as ``scores``.

    >>> rank_scores([0.9, 0.8, 0.8, float("nan")]).tolist()
    [1.0, 2.5, 2.5, 4.0]
    """
    values = _as_scores(scores, ndim=1, name="scores")
    return _rank_rows(values, higher_is_better)


def _direction_column(higher_is_better: bool | Sequence[bool], n_tasks: int) -> FloatArray:
    """One direction flag per task as a column (tasks × 1) of 1.0 (higher) / 0.0 (lower)."""
    flags = np.asarray(higher_is_better, dtype=bool)
    if flags.ndim == 0:
        flags = np.full(n_tasks, bool(flags))
    if flags.shape != (n_tasks,):
        raise MetricInputError(
            f"higher_is_better must be one bool or one per task ({n_tasks}), got {flags.shape[0]}"
        )
    return flags.astype(np.float64)[:, np.newaxis]


def rank_table(
    scores: npt.ArrayLike, *, higher_is_better: bool | Sequence[bool] = True
) -> FloatArray:
    """Rank participants within every task of a participants × tasks score table.

    ``higher_is_better`` is one flag for all tasks or one per task. Each column of the result
    holds that task's ranks (1 best, ties averaged, missing = NaN ranks worst), so every column
    sums to ``n(n+1)/2`` for ``n`` participants.
    """
    table = _as_scores(scores, ndim=2, name="scores")
    if table.shape[0] == 0 or table.shape[1] == 0:
        raise MetricInputError(
            f"scores must have at least one participant and one task, got shape {table.shape}"
        )
    flags = _direction_column(higher_is_better, table.shape[1])
    return _rank_rows(table.T, flags.astype(bool)).T


def mean_rank(
    scores: npt.ArrayLike, *, higher_is_better: bool | Sequence[bool] = True
) -> FloatArray:
    """Average of each participant's per-task ranks (AutoWSL / ChaLearn AutoML leaderboard).

    Lower is better; every value lies in ``[1, n]`` for ``n`` participants.
    """
    ranks = rank_table(scores, higher_is_better=higher_is_better)
    return np.asarray(ranks.mean(axis=1), dtype=np.float64)


def median_rank(
    scores: npt.ArrayLike, *, higher_is_better: bool | Sequence[bool] = True
) -> FloatArray:
    """Median of each participant's per-task ranks; lower is better, robust to one bad task."""
    ranks = rank_table(scores, higher_is_better=higher_is_better)
    return np.asarray(np.median(ranks, axis=1), dtype=np.float64)


def borda_count(
    scores: npt.ArrayLike, *, higher_is_better: bool | Sequence[bool] = True
) -> FloatArray:
    """Borda count: per task, one point for every participant beaten, half a point per tie.

    Equals the sum over tasks of ``n - rank``; higher is better, within ``[0, (n-1)·tasks]``.
    A missing result beats only other missing results by half points.
    """
    ranks = rank_table(scores, higher_is_better=higher_is_better)
    return np.asarray((ranks.shape[0] - ranks).sum(axis=1), dtype=np.float64)


@dataclass(frozen=True)
class BootstrapInterval:
    """A point estimate with a percentile bootstrap interval, one value per participant.

    Arrays have the shape of the input without its case axis (0-d for a single participant).
    """

    estimate: FloatArray
    low: FloatArray
    high: FloatArray
    confidence: float


def _check_resamples(n_resamples: int) -> None:
    """Reject a resample count that is not an integer of at least 1."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise MetricInputError(f"n_resamples must be an integer, got {n_resamples!r}")
    if n_resamples < 1:
        raise MetricInputError(f"n_resamples must be at least 1, got {n_resamples}")


def _check_confidence(confidence: float) -> None:
    """Reject a confidence level outside (0, 1)."""
    if not 0.0 < confidence < 1.0:
        raise MetricInputError(f"confidence must lie strictly between 0 and 1, got {confidence}")


def _case_matrix(case_scores: npt.ArrayLike) -> tuple[FloatArray, bool]:
    """Case scores as participants × cases, and whether the input was 1-D (one participant)."""
    try:
        one_participant = np.ndim(case_scores) == 1
    except ValueError as error:  # ragged nested lists
        raise MetricInputError(f"case_scores must be a rectangular array: {error}") from error
    values = _as_scores(case_scores, ndim=1 if one_participant else 2, name="case_scores")
    matrix = values.reshape(1, -1) if one_participant else values
    if matrix.shape[1] == 0:
        raise MetricInputError("case_scores must hold at least one case per participant")
    return matrix, one_participant


def _apply_aggregate(aggregate: Aggregate, values: FloatArray) -> FloatArray:
    """Reduce the last axis of ``values`` with ``aggregate``, checking the result's shape."""
    result = np.asarray(aggregate(values, axis=-1), dtype=np.float64)
    if result.shape != values.shape[:-1]:
        raise MetricInputError(
            f"aggregate must reduce the last (case) axis: {values.shape} gave {result.shape}"
        )
    return result


def _resample_indices(n_cases: int, n_resamples: int, seed: int | np.random.Generator) -> Any:
    """Case indices drawn with replacement, n_resamples × n_cases."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return rng.integers(0, n_cases, size=(n_resamples, n_cases))


def _case_counts(indices: Any) -> FloatArray:
    """How often each case was drawn in each resample: n_resamples × n_cases."""
    n_resamples, n_cases = indices.shape
    offsets = np.arange(n_resamples)[:, np.newaxis] * n_cases
    counts = np.bincount((indices + offsets).ravel(), minlength=n_resamples * n_cases)
    return counts.reshape(n_resamples, n_cases).astype(np.float64)


def _resampled_means(matrix: FloatArray, counts: FloatArray) -> FloatArray:
    """Means over resampled cases as one matrix product with the per-resample case counts."""
    sums = matrix @ counts.T  # integer counts: divide afterwards, as np.mean does
    means: FloatArray = sums / counts.shape[1]
    return means


def _resampled_medians(matrix: FloatArray, counts: FloatArray) -> FloatArray:
    """Medians over resampled cases from cumulative counts along each participant's sorted cases.

    The k-th smallest resampled value is the first sorted case whose cumulative count reaches k;
    this avoids materialising participants × resamples × cases values.
    """
    n_cases = matrix.shape[1]
    lower_k, upper_k = (n_cases + 1) // 2, n_cases // 2 + 1
    medians = np.empty((matrix.shape[0], counts.shape[0]))
    for participant, row in enumerate(matrix):  # one vectorised pass per participant
        order = np.argsort(row, kind="stable")
        cumulative = np.cumsum(counts[:, order], axis=1)
        lower = row[order][(cumulative < lower_k).sum(axis=1)]
        upper = row[order][(cumulative < upper_k).sum(axis=1)]
        medians[participant] = lower if n_cases % 2 else (lower + upper) / 2.0
    return medians


_FAST_AGGREGATES: dict[Aggregate, Callable[[FloatArray, FloatArray], FloatArray]] = {
    np.mean: _resampled_means,
    np.median: _resampled_medians,
}


def bootstrap_aggregates(
    case_scores: npt.ArrayLike,
    *,
    aggregate: Aggregate = np.mean,
    n_resamples: int = 1000,
    seed: int | np.random.Generator = 0,
) -> FloatArray:
    """The bootstrap distribution of each participant's aggregate score.

    ``case_scores`` is participants × cases (or 1-D for one participant). Every resample draws
    ``n_cases`` case indices with replacement, the same cases for all participants (a paired
    bootstrap, so rank comparisons stay fair), and applies ``aggregate(values, axis=-1)``.
    Returns participants × n_resamples (or n_resamples for 1-D input). NaN case scores propagate
    through ``np.mean``; pass ``np.nanmean`` to skip them. Deterministic for a given ``seed``.
    """
    _check_resamples(n_resamples)
    matrix, one_participant = _case_matrix(case_scores)
    indices = _resample_indices(matrix.shape[1], n_resamples, seed)
    fast = _FAST_AGGREGATES.get(aggregate)
    if fast is not None and not np.isnan(matrix).any():
        result = fast(matrix, _case_counts(indices))
    else:
        per_chunk = max(1, _CHUNK_VALUES // matrix.size)
        parts = [
            _apply_aggregate(aggregate, matrix[:, indices[start : start + per_chunk]])
            for start in range(0, n_resamples, per_chunk)
        ]
        result = np.concatenate(parts, axis=1)
    return result[0] if one_participant else result


def _percentiles(samples: FloatArray, confidence: float) -> tuple[FloatArray, FloatArray]:
    """Lower and upper percentile bounds of ``samples`` along the last axis."""
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(samples, [tail, 1.0 - tail], axis=-1)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def bootstrap_score_ci(
    case_scores: npt.ArrayLike,
    *,
    aggregate: Aggregate = np.mean,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> BootstrapInterval:
    """Percentile bootstrap confidence interval of each participant's aggregate score.

    ``case_scores``: participants × cases, or 1-D for one participant. The estimate is
    ``aggregate`` over all cases; ``low``/``high`` are the ``(1 ± confidence)/2`` quantiles of
    the aggregate over ``n_resamples`` resamples of the cases (with replacement, seeded).
    """
    _check_confidence(confidence)
    matrix, one_participant = _case_matrix(case_scores)
    samples = bootstrap_aggregates(matrix, aggregate=aggregate, n_resamples=n_resamples, seed=seed)
    low, high = _percentiles(samples, confidence)
    estimate = _apply_aggregate(aggregate, matrix)
    if one_participant:
        return BootstrapInterval(estimate[0], low[0], high[0], confidence)
    return BootstrapInterval(estimate, low, high, confidence)


def bootstrap_rank_ci(
    case_scores: npt.ArrayLike,
    *,
    higher_is_better: bool = True,
    aggregate: Aggregate = np.mean,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> BootstrapInterval:
    """Percentile bootstrap confidence interval of each participant's rank on one task.

    ``case_scores`` is participants × cases. Each resample ranks the participants' aggregates
    (ties averaged, NaN aggregate = missing ranks worst); the estimate is the rank on all cases.
    A wide interval means the leaderboard position is not settled by this test set.
    """
    _check_confidence(confidence)
    matrix, one_participant = _case_matrix(case_scores)
    if one_participant:
        raise MetricInputError(
            "case_scores must be participants × cases (2-D) to rank, got a 1-D array"
        )
    samples = bootstrap_aggregates(matrix, aggregate=aggregate, n_resamples=n_resamples, seed=seed)
    resampled_ranks = _rank_rows(samples.T, higher_is_better).T
    low, high = _percentiles(resampled_ranks, confidence)
    estimate = _rank_rows(_apply_aggregate(aggregate, matrix), higher_is_better)
    return BootstrapInterval(estimate=estimate, low=low, high=high, confidence=confidence)
