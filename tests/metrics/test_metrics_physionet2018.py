"""The 2018 scorer against a plain re-implementation of the official algorithm."""

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.formats.vec import VecFormatError, VecLengthWarning, read_vec, read_vec_histograms
from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning
from proctor.metrics.physionet2018 import (
    ArousalTally,
    bin_indices,
    class_histograms,
    gross_scores,
    record_auprc_auroc,
)

RANGE = (-0.0005, 1.0005)


def official_read(path: Path, length: int) -> np.ndarray:
    predictions = np.zeros(length, dtype=np.float32)
    with path.open("rb") as handle:
        for i, line in enumerate(handle):
            if i >= length:
                break
            predictions[i] = float(line)
    return predictions


def official_histograms(pred: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    every = np.histogram(pred, bins=1001, range=RANGE)[0]
    if every.sum() != pred.size:
        raise ValueError("invalid values")
    pos = np.histogram(pred[truth > 0], bins=1001, range=RANGE)[0]
    ign = np.histogram(pred[truth < 0], bins=1001, range=RANGE)[0]
    return pos, every - pos - ign


def official_auc(pos: np.ndarray, neg: np.ndarray) -> tuple[float, float]:
    """(AUPRC, AUROC) by the threshold sweep, written out from the spec."""
    total_pos, total_neg = int(pos.sum()), int(neg.sum())
    if total_pos == 0 or total_neg == 0:
        return math.nan, math.nan
    tp, fp, tn = total_pos, total_neg, 0
    recall, specificity, precision = 1.0, 0.0, tp / (tp + fp)
    auroc = auprc = 0.0
    for p, n in zip(pos.tolist(), neg.tolist(), strict=False):
        tp, fp, tn = tp - p, fp - n, tn + n
        r_prev, s_prev, p_prev = recall, specificity, precision
        recall = float(tp) / total_pos
        specificity = float(tn) / total_neg
        precision = float(tp) / (tp + fp) if tp + fp > 0 else p_prev
        auroc += (r_prev - recall) * (specificity + s_prev) * 0.5
        auprc += (r_prev - recall) * p_prev
    return auprc, auroc


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


edge_values = st.sampled_from([0.0, 0.0005, 0.0015, 0.4995, 0.5, 0.5005, 0.9995, 1.0])
prob = st.one_of(
    st.floats(0, 1, width=32), edge_values, st.integers(0, 1000).map(lambda k: k / 1000)
)


@st.composite
def records(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 80))
    pred = np.array(draw(st.lists(prob, min_size=n, max_size=n)), dtype=np.float32)
    labels = np.array(
        draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, -1.0, math.nan]), min_size=n, max_size=n))
    )
    return pred, labels


@settings(max_examples=300, deadline=None)
@given(records())
def test_record_scores_match_the_official_algorithm_to_the_last_digit(record):
    pred, labels = record
    expected = official_auc(*official_histograms(pred, labels))
    score = ArousalTally().add_record(pred, labels)
    assert same(score.auprc, expected[0]) and same(score.auroc, expected[1])


@settings(max_examples=100, deadline=None)
@given(st.lists(records(), min_size=1, max_size=5))
def test_gross_scores_sum_histograms_over_records_including_those_without_arousals(recs):
    pos_total = np.zeros(1001, dtype=np.int64)
    neg_total = np.zeros(1001, dtype=np.int64)
    tally = ArousalTally()
    for pred, labels in recs:
        pos, neg = official_histograms(pred, labels)
        pos_total += pos
        neg_total += neg
        tally.add_record(pred, labels)
    expected = official_auc(pos_total, neg_total)
    assert same(tally.gross_auprc(), expected[0]) and same(tally.gross_auroc(), expected[1])


@settings(max_examples=200, deadline=None)
@given(st.lists(prob, min_size=1, max_size=200))
def test_bins_equal_numpy_histogram_on_float32_and_float64(values):
    for dtype in (np.float32, np.float64):
        array = np.array(values, dtype=dtype)
        counts = np.bincount(bin_indices(array), minlength=1001)
        assert (counts == np.histogram(array, bins=1001, range=RANGE)[0]).all()


def test_every_float32_bin_edge_and_its_neighbours_bin_like_numpy():
    edges = np.histogram_bin_edges(np.empty(0, np.float32), bins=1001, range=RANGE)
    inner = edges[(edges >= 0) & (edges <= 1)]
    values = np.concatenate(
        [inner, np.nextafter(inner, np.float32(0)), np.nextafter(inner, np.float32(1))]
    ).astype(np.float32)
    values = values[(values >= 0) & (values <= 1)]
    expected = np.searchsorted(edges, values, side="right") - 1
    assert (bin_indices(values) == np.minimum(expected, 1000)).all()


def test_exact_half_thousandths_go_to_the_upper_bin():
    assert bin_indices(np.array([0.0005, 0.0015], dtype=np.float32)).tolist() == [1, 2]


def test_a_record_without_positives_is_nan_but_still_counts_in_the_gross_totals():
    tally = ArousalTally()
    empty = tally.add_record(np.array([0.9, 0.1], np.float32), np.array([0.0, 0.0]))
    assert math.isnan(empty.auprc) and math.isnan(empty.auroc)
    tally.add_record(np.array([0.2, 0.8], np.float32), np.array([1.0, 0.0]))
    # the negative at 0.9 from the first record outranks the only positive
    assert tally.gross_auprc() == pytest.approx(1 / 3)


def test_merged_tallies_equal_one_tally_over_all_records():
    rng = np.random.default_rng(7)
    recs = [(rng.random(50).astype(np.float32), rng.integers(-1, 2, 50)) for _ in range(4)]
    whole, left, right = ArousalTally(), ArousalTally(), ArousalTally()
    for i, (pred, labels) in enumerate(recs):
        whole.add_record(pred, labels)
        (left if i % 2 else right).add_record(pred, labels)
    left.merge(right)
    assert left.gross_auprc() == whole.gross_auprc()
    assert left.gross_auroc() == whole.gross_auroc()
    assert left.records == 4


@pytest.mark.parametrize("bad", [math.nan, 1.5, -0.25])
def test_predictions_must_be_probabilities(bad):
    with pytest.raises(MetricInputError, match="sample 1"):
        ArousalTally().add_record(np.array([0.5, bad], np.float32), np.array([1.0, 0.0]))


def test_lengths_must_match():
    with pytest.raises(MetricInputError, match="one prediction per reference sample"):
        class_histograms(np.zeros(3, np.uint16), np.zeros(4))


def test_pure_functions_warn_when_undefined():
    with pytest.warns(UndefinedMetricWarning):
        auprc, _ = record_auprc_auroc(np.array([0.5], np.float32), np.array([0.0]))
    assert math.isnan(auprc)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pairs = [(np.array([0.9, 0.1], np.float32), np.array([1.0, 0.0]))]
        assert gross_scores(pairs) == (1.0, 1.0)


@settings(max_examples=60, deadline=None)
@given(records(), st.integers(-3, 3), st.sampled_from(["%.3f\n", "%.4f\n", "%g\r\n", "%r\n"]))
def test_text_to_score_matches_official_reading_and_scoring_with_pad_and_truncate(
    tmp_path_factory, record, shift, fmt
):
    pred, labels = record
    n_lines = max(0, pred.size + shift)
    values = np.resize(pred, n_lines) if n_lines else pred[:0]
    path = tmp_path_factory.mktemp("vec") / "r.vec"
    path.write_text("".join(fmt % float(v) for v in values))
    official = official_read(path, labels.size)
    expected = official_auc(*official_histograms(official, labels))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pos, neg, notes = read_vec_histograms(path, labels)
        ours, _ = read_vec(path, labels.size)
    assert ours.tobytes() == official.tobytes()
    score = ArousalTally().add_histograms(pos, neg)
    assert same(score.auprc, expected[0]) and same(score.auroc, expected[1])
    wrong = n_lines != labels.size
    assert bool(notes) == wrong
    assert any(issubclass(w.category, VecLengthWarning) for w in caught) == wrong
    if wrong:
        assert "wrong number of samples" in notes[0]


def test_a_file_that_errors_leaves_the_tally_untouched(tmp_path):
    tally = ArousalTally()
    tally.add_record(np.array([0.9, 0.1], np.float32), np.array([1.0, 0.0]))
    bad = tmp_path / "bad.vec"
    bad.write_text("0.5\nnan\n")
    with pytest.raises(VecFormatError):
        read_vec_histograms(bad, np.array([1.0, 0.0]))
    assert tally.gross_auprc() == 1.0 and tally.records == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_within_the_outer_bin_edges_are_scored_like_numpy_histogram(dtype):
    low, high = (np.array(edge, dtype=dtype) for edge in RANGE)
    inside = [low, np.nextafter(low, dtype(1)), dtype(-0.0002), dtype(1.0004), high]
    values = np.array(inside, dtype=dtype)
    expected = np.histogram(values, bins=1001, range=RANGE)[0]
    assert np.bincount(bin_indices(values), minlength=1001).tolist() == expected.tolist()
    for outside in (np.nextafter(low, dtype(-1)), np.nextafter(high, dtype(2))):
        assert np.histogram(np.array([outside]), bins=1001, range=RANGE)[0].sum() == 0
        with pytest.raises(MetricInputError, match="sample 0"):
            bin_indices(np.array([outside], dtype=dtype))


def test_long_runs_of_one_value_count_like_numpy_histogram():
    labels = np.repeat([1.0, 0.0, -1.0, np.nan, 2.5], 70_001)
    values = np.repeat(np.array([0.25, 0.5, 0.75, 0.0005, 1.0], np.float32), 70_001)
    positive, negative = class_histograms(bin_indices(values), labels)
    assert positive.tolist() == official_histograms(values, labels)[0].tolist()
    assert negative.tolist() == official_histograms(values, labels)[1].tolist()
