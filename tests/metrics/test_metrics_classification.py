import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss as sk_brier
from sklearn.metrics import roc_auc_score as sk_auc

from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning
from proctor.metrics.classification import (
    brier_score_loss,
    expected_calibration_error,
    reliability_curve,
    roc_auc_score,
    sorted_labels,
)


@st.composite
def binary_problems(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(2, 60))
    truth = draw(
        st.lists(st.integers(0, 1), min_size=n, max_size=n).filter(lambda t: len(set(t)) == 2)
    )
    kind = draw(st.sampled_from(["continuous", "ties", "hard"]))
    if kind == "continuous":
        scores = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
    elif kind == "ties":
        scores = draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=n, max_size=n))
    else:
        scores = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    return np.array(truth), np.array(scores)


@settings(max_examples=300, deadline=None)
@given(binary_problems())
def test_roc_auc_equals_sklearn_exactly_including_ties_and_hard_labels(problem):
    truth, scores = problem
    assert roc_auc_score(truth, scores) == sk_auc(truth, scores)


def test_roc_auc_takes_the_larger_label_as_positive():
    assert roc_auc_score([-1, -1, 1, 1], [0.1, 0.4, 0.35, 0.8]) == 0.75
    assert roc_auc_score([2, 2, 5, 5], [0.1, 0.4, 0.35, 0.8]) == 0.75


def test_roc_auc_of_a_single_class_is_nan_with_a_warning_not_zero():
    with pytest.warns(UndefinedMetricWarning, match="single class"):
        assert math.isnan(roc_auc_score([1, 1, 1], [0.1, 0.2, 0.3]))


@pytest.mark.parametrize(
    ("truth", "scores", "message"),
    [
        ([0, 1], [0.5], "one score per case"),
        ([0, 1, 2], [0.1, 0.2, 0.3], "two classes"),
        ([0, 1], [0.1, float("nan")], "finite"),
        ([[0, 1]], [[0.1, 0.2]], "1-D"),
    ],
)
def test_roc_auc_rejects_bad_input_with_a_clear_message(truth, scores, message):
    with pytest.raises(MetricInputError, match=message):
        roc_auc_score(truth, scores)


@settings(max_examples=100, deadline=None)
@given(binary_problems())
def test_brier_score_matches_sklearn(problem):
    truth, scores = problem
    prob = scores.astype(float)
    assert brier_score_loss(truth, prob) == pytest.approx(sk_brier(truth, prob), abs=1e-15)


@settings(max_examples=100, deadline=None)
@given(binary_problems(), st.integers(1, 12))
def test_reliability_curve_matches_sklearn_uniform_calibration_curve(problem, n_bins):
    truth, scores = problem
    prob = scores.astype(float)
    frac, mean = calibration_curve(truth, prob, n_bins=n_bins, strategy="uniform")
    curve = reliability_curve(truth, prob, n_bins=n_bins)
    np.testing.assert_allclose(curve.fraction_positive, frac, atol=1e-12)
    np.testing.assert_allclose(curve.mean_predicted, mean, atol=1e-12)


def test_ece_is_the_count_weighted_gap_over_ten_default_bins():
    truth = np.array([0, 1, 1, 0])
    prob = np.array([0.05, 0.05, 0.95, 0.95])
    # bin [0, 0.1]: mean prob 0.05, frequency 0.5; bin (0.9, 1]: same gap
    assert expected_calibration_error(truth, prob) == pytest.approx(0.45)
    assert expected_calibration_error([0, 1], [0.0, 1.0]) == 0.0


def test_ece_edge_values_belong_to_the_lower_bin_as_in_sklearn():
    curve = reliability_curve([1, 0], [0.1, 0.1000001], n_bins=10)
    assert curve.bin_index.tolist() == [0, 1]


def test_calibration_metrics_refuse_probabilities_outside_unit_interval():
    with pytest.raises(MetricInputError, match=r"\[0, 1\]"):
        brier_score_loss([0, 1], [0.5, 1.5])
    with pytest.raises(MetricInputError, match="n_bins"):
        expected_calibration_error([0, 1], [0.5, 0.5], n_bins=0)


def test_calibration_metrics_of_no_cases_are_nan_with_a_warning():
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(expected_calibration_error([], []))
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(brier_score_loss([], []))


@given(st.lists(st.booleans(), max_size=12) | st.lists(st.integers(-3, 3), max_size=12))
def test_sorted_labels_are_numpys_unique(labels: list[bool] | list[int]) -> None:
    array = np.array(labels, dtype=np.bool_ if labels and isinstance(labels[0], bool) else None)
    expected = np.unique(array)
    found = sorted_labels(array)
    assert (found.dtype, found.tolist()) == (expected.dtype, expected.tolist())
