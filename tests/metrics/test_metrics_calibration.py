import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning
from proctor.metrics.calibration import CalibrationTally
from proctor.metrics.classification import brier_score_loss, expected_calibration_error

probabilities = arrays(np.float64, st.integers(2, 60), elements=st.floats(0, 1))


@settings(max_examples=60, deadline=None)
@given(probabilities, st.data(), st.integers(1, 5))
def test_chunked_tallies_equal_the_array_metrics(prob: np.ndarray, data, chunks: int) -> None:
    truth = np.array(data.draw(st.lists(st.booleans(), min_size=prob.size, max_size=prob.size)))
    truth[0], truth[-1] = True, False  # both classes, so "the larger label" is True
    tally = CalibrationTally()
    for part_truth, part_prob in zip(
        np.array_split(truth, chunks), np.array_split(prob, chunks), strict=True
    ):
        tally.add(part_truth, part_prob)
    labels = truth.astype(int)
    assert tally.brier_score_loss() == pytest.approx(brier_score_loss(labels, prob), abs=1e-12)
    assert tally.expected_calibration_error() == pytest.approx(
        expected_calibration_error(labels, prob), abs=1e-12
    )


def test_a_chunk_of_negatives_only_stays_negative() -> None:
    tally = CalibrationTally()
    tally.add(np.zeros(4, dtype=bool), np.full(4, 0.25))
    assert tally.brier_score_loss() == pytest.approx(0.0625)
    assert tally.expected_calibration_error() == pytest.approx(0.25)


def test_merging_two_tallies_equals_one_tally() -> None:
    rng = np.random.default_rng(3)
    truth, prob = rng.random(100) < 0.3, rng.random(100)
    whole, left, right = CalibrationTally(), CalibrationTally(), CalibrationTally()
    whole.add(truth, prob)
    left.add(truth[:37], prob[:37])
    right.add(truth[37:], prob[37:])
    left.merge(right)
    assert left.expected_calibration_error() == pytest.approx(whole.expected_calibration_error())
    assert left.brier_score_loss() == pytest.approx(whole.brier_score_loss())


def test_an_empty_tally_is_undefined_not_zero() -> None:
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(CalibrationTally().brier_score_loss())


def test_labels_must_be_booleans() -> None:
    with pytest.raises(MetricInputError, match="boolean"):
        CalibrationTally().add(np.array([0, 1]), np.array([0.1, 0.2]))
