"""The table metrics equal scikit-learn / SciPy on the same arrays (to 1e-12), ties included."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
import sklearn.metrics as skm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from proctor.metrics import tabular_classification as tc
from proctor.metrics import tabular_probabilities as tp
from proctor.metrics import tabular_ranking as tr
from proctor.metrics import tabular_regression as tg
from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning

TOLERANCE = 1e-12


def _quiet(call: Callable[[], float]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(call())


def _same(ours: float, theirs: float) -> None:
    if math.isnan(theirs):
        assert math.isnan(ours)
    else:
        assert ours == pytest.approx(theirs, rel=TOLERANCE, abs=TOLERANCE)


LABEL_METRICS: dict[str, tuple[Callable[..., float], Callable[..., float]]] = {
    "accuracy": (tc.accuracy_score, skm.accuracy_score),
    "balanced_accuracy": (tc.balanced_accuracy_score, skm.balanced_accuracy_score),
    "f1_macro": (tc.f1_macro_score, lambda t, p: skm.f1_score(t, p, average="macro")),
    "f1_micro": (tc.f1_micro_score, lambda t, p: skm.f1_score(t, p, average="micro")),
    "f1_weighted": (tc.f1_weighted_score, lambda t, p: skm.f1_score(t, p, average="weighted")),
    "precision_macro": (
        tc.precision_macro_score,
        lambda t, p: skm.precision_score(t, p, average="macro", zero_division=0),
    ),
    "recall_macro": (
        tc.recall_macro_score,
        lambda t, p: skm.recall_score(t, p, average="macro", zero_division=0),
    ),
    "cohen_kappa": (tc.cohen_kappa_score, skm.cohen_kappa_score),
    "quadratic_weighted_kappa": (
        tc.quadratic_weighted_kappa_score,
        lambda t, p: skm.cohen_kappa_score(t, p, weights="quadratic"),
    ),
    "mcc": (tc.matthews_corrcoef_score, skm.matthews_corrcoef),
}


@st.composite
def label_pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    size = draw(st.integers(1, 60))
    classes = draw(st.integers(1, 5))
    labels = st.integers(0, classes - 1)
    truth = draw(st.lists(labels, min_size=size, max_size=size))
    pred = draw(st.lists(labels, min_size=size, max_size=size))
    return np.array(truth), np.array(pred)


@pytest.mark.parametrize("name", sorted(LABEL_METRICS))
@settings(max_examples=150, deadline=None)
@given(pair=label_pairs())
def test_label_metric_equals_scikit_learn(name: str, pair: tuple[np.ndarray, np.ndarray]) -> None:
    ours, theirs = LABEL_METRICS[name]
    truth, pred = pair
    _same(_quiet(lambda: ours(truth, pred)), _quiet(lambda: theirs(truth, pred)))


@pytest.mark.parametrize("name", sorted(LABEL_METRICS))
def test_label_metric_takes_string_labels_as_scikit_learn_does(name: str) -> None:
    ours, theirs = LABEL_METRICS[name]
    truth = np.array(["cat", "dog", "dog", "bird", "cat", "cat"])
    pred = np.array(["cat", "dog", "cat", "cat", "fish", "cat"])
    _same(_quiet(lambda: ours(truth, pred)), _quiet(lambda: theirs(truth, pred)))


def test_kappa_of_one_same_class_is_nan_with_a_warning() -> None:
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(tc.cohen_kappa_score([1, 1], [1, 1]))


finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
tied = st.sampled_from([0.0, 0.25, 0.5, 1.0, -3.0])


@st.composite
def binary_scores(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    size = draw(st.integers(2, 60))
    truth = draw(st.lists(st.integers(0, 1), min_size=size, max_size=size))
    scores = draw(st.lists(st.one_of(finite, tied), min_size=size, max_size=size))
    return np.array(truth), np.array(scores)


@settings(max_examples=200, deadline=None)
@given(pair=binary_scores())
def test_binary_roc_auc_equals_scikit_learn(pair: tuple[np.ndarray, np.ndarray]) -> None:
    truth, scores = pair
    _same(
        _quiet(lambda: tp.roc_auc_ovr_score(truth, scores)),
        _quiet(lambda: skm.roc_auc_score(truth, scores)),
    )


@settings(max_examples=200, deadline=None)
@given(pair=binary_scores())
def test_binary_average_precision_equals_scikit_learn(pair: tuple[np.ndarray, np.ndarray]) -> None:
    truth, scores = pair
    _same(
        _quiet(lambda: tp.average_precision_macro_score(truth, scores)),
        _quiet(lambda: skm.average_precision_score(truth, scores)),
    )


@st.composite
def class_probabilities(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n_classes = draw(st.integers(3, 5))
    size = draw(st.integers(n_classes, 50))
    truth = np.array(
        draw(st.permutations(range(n_classes)))
        + draw(
            st.lists(
                st.integers(0, n_classes - 1), min_size=size - n_classes, max_size=size - n_classes
            )
        )
    )
    weights = draw(
        st.lists(
            st.lists(
                st.sampled_from([0.0, 1.0, 2.0, 3.0, 0.5]), min_size=n_classes, max_size=n_classes
            ),
            min_size=size,
            max_size=size,
        )
    )
    raw = np.array(weights) + 1e-3
    return truth, raw / raw.sum(axis=1, keepdims=True)


@settings(max_examples=150, deadline=None)
@given(pair=class_probabilities())
def test_multiclass_roc_auc_equals_scikit_learn_one_vs_rest_macro(
    pair: tuple[np.ndarray, np.ndarray],
) -> None:
    truth, prob = pair
    _same(
        tp.roc_auc_ovr_score(truth, prob),
        skm.roc_auc_score(truth, prob, multi_class="ovr", average="macro"),
    )


@settings(max_examples=150, deadline=None)
@given(pair=class_probabilities())
def test_multiclass_average_precision_equals_scikit_learn_macro(
    pair: tuple[np.ndarray, np.ndarray],
) -> None:
    truth, prob = pair
    _same(tp.average_precision_macro_score(truth, prob), skm.average_precision_score(truth, prob))


@settings(max_examples=150, deadline=None)
@given(pair=class_probabilities())
def test_multiclass_log_loss_equals_scikit_learn(pair: tuple[np.ndarray, np.ndarray]) -> None:
    truth, prob = pair
    _same(tp.log_loss(truth, prob), skm.log_loss(truth, prob))


@settings(max_examples=150, deadline=None)
@given(
    truth=st.lists(st.integers(0, 1), min_size=2, max_size=40).filter(lambda t: len(set(t)) == 2),
    data=st.data(),
)
def test_binary_log_loss_equals_scikit_learn(truth: list[int], data: st.DataObject) -> None:
    prob = data.draw(
        st.lists(
            st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0, 0.5])),
            min_size=len(truth),
            max_size=len(truth),
        )
    )
    _same(tp.log_loss(truth, prob), skm.log_loss(truth, prob))


def test_log_loss_with_labels_absent_from_y_true_equals_scikit_learn() -> None:
    truth = np.array([0, 2, 2, 0])
    prob = np.array([[0.7, 0.1, 0.2], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]])
    _same(tp.log_loss(truth, prob, labels=[0, 1, 2]), skm.log_loss(truth, prob, labels=[0, 1, 2]))


def test_log_loss_of_a_single_class_is_an_error_as_in_scikit_learn() -> None:
    with pytest.raises(ValueError):
        skm.log_loss([1, 1], [0.5, 0.5])
    with pytest.raises(MetricInputError, match="single class"):
        tp.log_loss([1, 1], [0.5, 0.5])


def test_roc_auc_of_a_single_class_is_nan_with_a_warning() -> None:
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(tp.roc_auc_ovr_score([1, 1, 1], [0.2, 0.4, 0.9]))


def test_multiclass_roc_auc_refuses_rows_that_do_not_sum_to_one() -> None:
    with pytest.raises(MetricInputError, match="sum to 1"):
        tp.roc_auc_ovr_score([0, 1, 2], [[0.5, 0.5, 0.5]] * 3)


REGRESSION: dict[str, tuple[Callable[..., float], Callable[..., float]]] = {
    "rmse": (tg.root_mean_squared_error, skm.root_mean_squared_error),
    "mae": (tg.mean_absolute_error, skm.mean_absolute_error),
    "r2": (tg.r2_score, skm.r2_score),
    "mape": (tg.mean_absolute_percentage_error, skm.mean_absolute_percentage_error),
    "pearson": (tg.pearson_correlation, lambda t, p: stats.pearsonr(t, p).statistic),
    "spearman": (tg.spearman_correlation, lambda t, p: stats.spearmanr(t, p).statistic),
}

values = st.one_of(st.floats(-1e4, 1e4, allow_nan=False), st.sampled_from([0.0, 1.0, 2.5, -7.0]))


@pytest.mark.parametrize("name", sorted(REGRESSION))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_regression_metric_equals_scikit_learn_or_scipy(name: str, data: st.DataObject) -> None:
    ours, theirs = REGRESSION[name]
    minimum = 2 if name in ("pearson", "spearman") else 1
    size = data.draw(st.integers(minimum, 50))
    truth = np.array(data.draw(st.lists(values, min_size=size, max_size=size)))
    pred = np.array(data.draw(st.lists(values, min_size=size, max_size=size)))
    _same(_quiet(lambda: ours(truth, pred)), _quiet(lambda: theirs(truth, pred)))


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_rmsle_equals_scikit_learn(data: st.DataObject) -> None:
    size = data.draw(st.integers(1, 50))
    positive = st.one_of(st.floats(-0.99, 1e4), st.sampled_from([0.0, 1.0, 3.0]))
    truth = np.array(data.draw(st.lists(positive, min_size=size, max_size=size)))
    pred = np.array(data.draw(st.lists(positive, min_size=size, max_size=size)))
    _same(tg.root_mean_squared_log_error(truth, pred), skm.root_mean_squared_log_error(truth, pred))


def test_rmsle_refuses_values_at_or_below_minus_one_as_scikit_learn_does() -> None:
    with pytest.raises(ValueError):
        skm.root_mean_squared_log_error([-1.0, 1.0], [1.0, 1.0])
    with pytest.raises(MetricInputError, match="-1"):
        tg.root_mean_squared_log_error([-1.0, 1.0], [1.0, 1.0])


def test_correlation_with_a_constant_array_is_nan_with_a_warning() -> None:
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(tg.pearson_correlation([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))


def _reference_apk(actual: list[str], predicted: list[str], k: int) -> float:
    """Kaggle's published apk (ml_metrics), written out as the reference."""
    predicted = predicted[:k]
    score, hits = 0.0, 0.0
    for i, p in enumerate(predicted):
        if p in actual and p not in predicted[:i]:
            hits += 1.0
            score += hits / (i + 1.0)
    if not actual:
        return 0.0
    return score / min(len(actual), k)


items = st.sampled_from(list("abcdefg"))


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.lists(items, max_size=4, unique=True), st.lists(items, max_size=8)),
        min_size=1,
        max_size=20,
    ),
    k=st.integers(1, 6),
)
def test_map_at_k_equals_the_reference_definition(
    rows: list[tuple[list[str], list[str]]], k: int
) -> None:
    actual = [row[0] for row in rows]
    predicted = [row[1] for row in rows]
    expected = float(np.mean([_reference_apk(a, p, k) for a, p in rows]))
    _same(tr.mean_average_precision_at_k(actual, predicted, k=k), expected)
