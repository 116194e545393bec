"""Tests of proctor.metrics.ranking: hand-computed tables, properties, bootstrap intervals."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from proctor.metrics._validation import MetricInputError
from proctor.metrics.ranking import (
    bootstrap_aggregates,
    bootstrap_rank_ci,
    bootstrap_score_ci,
    borda_count,
    mean_rank,
    median_rank,
    rank_scores,
    rank_table,
)

NAN = float("nan")

# Scores on a coarse grid so that ties are frequent; NaN marks a missing result.
score_values = st.one_of(
    st.integers(-5, 5).map(float),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.just(NAN),
)
score_vectors = hnp.arrays(np.float64, st.integers(1, 12), elements=score_values)
score_tables = hnp.arrays(
    np.float64, hnp.array_shapes(min_dims=2, max_dims=2, max_side=8), elements=score_values
)


def oracle_ranks(scores: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Average ranks from scipy, with NaN mapped below every real score (the documented policy)."""
    keys = -scores if higher_is_better else scores
    return np.asarray(scipy.stats.rankdata(np.where(np.isnan(scores), np.inf, keys)))


# ---------------------------------------------------------------- hand-computed tables


@pytest.mark.parametrize(
    ("scores", "higher_is_better", "expected"),
    [
        ([0.9, 0.8, 0.8, 0.7], True, [1.0, 2.5, 2.5, 4.0]),
        ([0.9, 0.8, 0.8, 0.7], False, [4.0, 2.5, 2.5, 1.0]),
        ([3.0, 1.0, 2.0], False, [3.0, 1.0, 2.0]),
        ([5, 5, 5], True, [2.0, 2.0, 2.0]),
        ([0.9, NAN, 0.7, NAN], True, [1.0, 3.5, 2.0, 3.5]),
        ([NAN, 10.0, 20.0], False, [3.0, 1.0, 2.0]),
        ([NAN, NAN, NAN], True, [2.0, 2.0, 2.0]),
        ([0.0, -0.0, 1.0], True, [2.5, 2.5, 1.0]),
        ([True, False], True, [1.0, 2.0]),
        ([], True, []),
    ],
)
def test_rank_scores_matches_hand_computed_ranks(
    scores: list[float], higher_is_better: bool, expected: list[float]
) -> None:
    ranks = rank_scores(scores, higher_is_better=higher_is_better)
    np.testing.assert_array_equal(ranks, expected)


@pytest.fixture
def autowsl_table() -> np.ndarray:
    """Three participants × three datasets of AUC; participant 2 failed dataset 0."""
    return np.array([[0.97, 0.93, 0.84], [0.95, 0.93, 0.90], [NAN, 0.90, 0.84]])


def test_rank_table_ranks_each_task_with_ties_and_missing(autowsl_table: np.ndarray) -> None:
    expected = [[1.0, 1.5, 2.5], [2.0, 1.5, 1.0], [3.0, 3.0, 2.5]]
    np.testing.assert_array_equal(rank_table(autowsl_table), expected)


def test_mean_rank_is_the_chalearn_average_of_per_dataset_ranks(autowsl_table: np.ndarray) -> None:
    np.testing.assert_allclose(mean_rank(autowsl_table), [5 / 3, 1.5, 8.5 / 3])


def test_median_rank_takes_the_middle_per_dataset_rank(autowsl_table: np.ndarray) -> None:
    np.testing.assert_array_equal(median_rank(autowsl_table), [1.5, 1.5, 3.0])


def test_borda_count_gives_a_point_per_beaten_participant(autowsl_table: np.ndarray) -> None:
    np.testing.assert_array_equal(borda_count(autowsl_table), [4.0, 4.5, 0.5])


def test_rank_table_takes_one_direction_per_task() -> None:
    auc_and_seconds = [[0.9, 300.0], [0.8, 100.0], [0.7, 200.0]]
    ranks = rank_table(auc_and_seconds, higher_is_better=[True, False])
    np.testing.assert_array_equal(ranks, [[1.0, 3.0], [2.0, 1.0], [3.0, 2.0]])


# ---------------------------------------------------------------- invalid input


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rank_scores([1.0, float("inf")]), "infinite"),
        (lambda: rank_scores([[1.0, 2.0]]), "1-D"),
        (lambda: rank_scores(["a", "b"]), "numbers"),
        (lambda: rank_scores([1.0, None]), "NaN"),
        (lambda: rank_table([1.0, 2.0]), "2-D"),
        (lambda: rank_table(np.empty((0, 3))), "at least one participant"),
        (lambda: rank_table(np.empty((3, 0))), "at least one participant"),
        (lambda: rank_table([[1.0, 2.0]], higher_is_better=[True]), "one per task"),
        (lambda: mean_rank([[1.0], [2.0, 3.0]]), "rectangular"),
        (lambda: bootstrap_score_ci([1.0, 2.0], n_resamples=0), "at least 1"),
        (lambda: bootstrap_score_ci([1.0, 2.0], n_resamples=10.0), "integer"),
        (lambda: bootstrap_score_ci([1.0, 2.0], confidence=1.0), "between 0 and 1"),
        (lambda: bootstrap_score_ci([], n_resamples=5), "at least one case"),
        (lambda: bootstrap_score_ci([1.0, -float("inf")]), "infinite"),
        (lambda: bootstrap_rank_ci([1.0, 2.0]), "2-D"),
        (lambda: bootstrap_score_ci([[1.0], [2.0, 3.0]]), "rectangular"),
        (lambda: bootstrap_score_ci([1.0, 2.0], aggregate=lambda a, axis: a), "last"),
    ],
)
def test_invalid_input_raises_a_metric_input_error_naming_the_problem(
    call: object, message: str
) -> None:
    assert callable(call)
    with pytest.raises(MetricInputError, match=message):
        call()


def test_metric_input_error_is_a_value_error() -> None:
    assert issubclass(MetricInputError, ValueError)


# ---------------------------------------------------------------- properties of ranks


@given(scores=score_vectors, higher_is_better=st.booleans())
def test_ranks_agree_with_scipy_average_ranks(scores: np.ndarray, higher_is_better: bool) -> None:
    ranks = rank_scores(scores, higher_is_better=higher_is_better)
    np.testing.assert_array_equal(ranks, oracle_ranks(scores, higher_is_better))


@given(scores=score_vectors, data=st.data())
def test_ranks_are_a_permutation_invariant_function(
    scores: np.ndarray, data: st.DataObject
) -> None:
    permutation = np.array(data.draw(st.permutations(range(scores.size))))
    np.testing.assert_array_equal(
        rank_scores(scores[permutation]), rank_scores(scores)[permutation]
    )


@given(scores=score_vectors)
def test_lower_is_better_ranks_the_negated_scores(scores: np.ndarray) -> None:
    np.testing.assert_array_equal(
        rank_scores(scores, higher_is_better=False), rank_scores(-scores, higher_is_better=True)
    )


@given(table=score_tables, higher_is_better=st.booleans())
def test_ranks_of_every_task_sum_to_n_times_n_plus_one_over_two(
    table: np.ndarray, higher_is_better: bool
) -> None:
    n = table.shape[0]
    ranks = rank_table(table, higher_is_better=higher_is_better)
    np.testing.assert_allclose(ranks.sum(axis=0), n * (n + 1) / 2)
    assert ranks.min() >= 1.0
    assert ranks.max() <= n


@given(scores=score_vectors, higher_is_better=st.booleans())
def test_a_missing_result_never_ranks_above_a_present_one(
    scores: np.ndarray, higher_is_better: bool
) -> None:
    ranks = rank_scores(scores, higher_is_better=higher_is_better)
    missing = np.isnan(scores)
    if missing.any() and not missing.all():
        assert ranks[missing].min() > ranks[~missing].max()
        assert ranks[missing].min() > 1.0
        assert np.unique(ranks[missing]).size == 1


@given(table=score_tables)
def test_mean_and_median_rank_lie_between_one_and_the_number_of_participants(
    table: np.ndarray,
) -> None:
    n = table.shape[0]
    for aggregate in (mean_rank(table), median_rank(table)):
        assert aggregate.shape == (n,)
        assert np.all((aggregate >= 1.0) & (aggregate <= n))
    np.testing.assert_allclose(mean_rank(table).sum(), (n + 1) / 2 * n)


@given(table=score_tables)
def test_borda_count_mirrors_the_rank_sum(table: np.ndarray) -> None:
    n, tasks = table.shape
    points = borda_count(table)
    np.testing.assert_allclose(points, n * tasks - rank_table(table).sum(axis=1))
    assert np.all((points >= 0.0) & (points <= (n - 1) * tasks))


@given(table=score_tables, data=st.data())
def test_mean_rank_ignores_the_order_of_tasks(table: np.ndarray, data: st.DataObject) -> None:
    permutation = data.draw(st.permutations(range(table.shape[1])))
    np.testing.assert_allclose(mean_rank(table[:, permutation]), mean_rank(table))


# ---------------------------------------------------------------- bootstrap


@given(
    values=hnp.arrays(np.float64, st.integers(1, 6), elements=st.floats(-100, 100)),
    n_cases=st.integers(1, 40),
    seed=st.integers(0, 2**32),
)
@settings(max_examples=30)
def test_score_ci_of_identical_cases_is_the_point_estimate(
    values: np.ndarray, n_cases: int, seed: int
) -> None:
    case_scores = np.repeat(values[:, np.newaxis], n_cases, axis=1)
    ci = bootstrap_score_ci(case_scores, n_resamples=50, seed=seed)
    np.testing.assert_allclose(ci.estimate, values)
    np.testing.assert_allclose(ci.low, values)
    np.testing.assert_allclose(ci.high, values)


@given(seed=st.integers(0, 2**32), small=st.floats(0.01, 1.0), factor=st.floats(1.5, 10.0))
@settings(max_examples=20)
def test_score_ci_widens_with_noise(seed: int, small: float, factor: float) -> None:
    noise = np.random.default_rng(seed).standard_normal(60)
    widths = []
    for scale in (small, small * factor):
        ci = bootstrap_score_ci(0.5 + scale * noise, n_resamples=200, seed=seed)
        assert ci.low <= ci.estimate <= ci.high
        widths.append(float(ci.high - ci.low))
    assert widths[1] > widths[0]
    np.testing.assert_allclose(widths[1], factor * widths[0], rtol=1e-9)


def test_rank_ci_of_well_separated_participants_is_their_rank() -> None:
    case_scores = np.array([[0.5] * 20, [0.9] * 20, [0.1] * 20])
    ci = bootstrap_rank_ci(case_scores, n_resamples=100)
    np.testing.assert_array_equal(ci.estimate, [2.0, 1.0, 3.0])
    np.testing.assert_array_equal(ci.low, ci.estimate)
    np.testing.assert_array_equal(ci.high, ci.estimate)


def test_rank_ci_of_close_participants_spans_several_ranks() -> None:
    rng = np.random.default_rng(7)
    case_scores = 0.8 + 0.1 * rng.standard_normal((4, 30))
    ci = bootstrap_rank_ci(case_scores, n_resamples=500, seed=3)
    assert np.all(ci.low <= ci.estimate)
    assert np.all(ci.estimate <= ci.high)
    assert np.all(ci.high - ci.low >= 1.0)


def test_rank_ci_follows_the_direction() -> None:
    seconds = np.array([[10.0] * 5, [20.0] * 5])
    ci = bootstrap_rank_ci(seconds, higher_is_better=False, n_resamples=20)
    np.testing.assert_array_equal(ci.estimate, [1.0, 2.0])


def test_a_missing_case_score_makes_the_participant_rank_worst_under_the_mean() -> None:
    case_scores = np.array([[0.9] * 19 + [NAN], [0.1] * 20])
    ci = bootstrap_rank_ci(case_scores, n_resamples=200)
    assert ci.estimate.tolist() == [2.0, 1.0]
    assert ci.high[0] == 2.0
    skipping = bootstrap_rank_ci(case_scores, aggregate=np.nanmean, n_resamples=200)
    assert skipping.estimate.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("aggregate", [np.mean, np.median])
@pytest.mark.parametrize("n_cases", [1, 2, 7, 10])
def test_fast_aggregate_paths_equal_the_general_path(aggregate: object, n_cases: int) -> None:
    assert callable(aggregate)
    case_scores = np.round(np.random.default_rng(n_cases).random((5, n_cases)), 1)
    fast = bootstrap_aggregates(case_scores, aggregate=aggregate, n_resamples=300, seed=11)
    general = bootstrap_aggregates(
        case_scores, aggregate=lambda a, axis: aggregate(a, axis=axis), n_resamples=300, seed=11
    )
    assert fast.shape == (5, 300)
    np.testing.assert_allclose(fast, general, rtol=1e-12, atol=1e-12)


def test_bootstrap_is_reproducible_from_its_seed_or_generator() -> None:
    case_scores = np.random.default_rng(0).random((3, 25))
    first = bootstrap_aggregates(case_scores, n_resamples=50, seed=5)
    again = bootstrap_aggregates(case_scores, n_resamples=50, seed=np.random.default_rng(5))
    other = bootstrap_aggregates(case_scores, n_resamples=50, seed=6)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_one_participant_gives_scalar_intervals() -> None:
    ci = bootstrap_score_ci([0.2, 0.4, 0.6], n_resamples=100, confidence=0.9)
    assert ci.estimate.shape == ci.low.shape == ci.high.shape == ()
    assert ci.confidence == 0.9
    assert bootstrap_aggregates([0.2, 0.4], n_resamples=7).shape == (7,)


def test_bootstrap_of_1000_cases_by_20_participants_brackets_every_estimate() -> None:
    # Its cost at this size is measured by bench/bench_challenge_scale.py, not asserted here.
    case_scores = np.random.default_rng(1).random((20, 1000))
    for interval in (
        bootstrap_rank_ci(case_scores, n_resamples=1000),
        bootstrap_score_ci(case_scores, aggregate=np.median, n_resamples=1000),
    ):
        assert interval.estimate.shape == interval.low.shape == interval.high.shape == (20,)
        assert np.all(interval.low <= interval.estimate)
        assert np.all(interval.estimate <= interval.high)
