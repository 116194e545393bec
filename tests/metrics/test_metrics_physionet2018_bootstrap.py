import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.metrics._validation import MetricInputError
from proctor.metrics.physionet2018 import N_BINS, auc_from_histograms
from proctor.metrics.physionet2018_bootstrap import (
    auprc_from_histograms_batch,
    bootstrap_gross_auprc,
)


def histograms(rng: np.random.Generator, records: int) -> tuple[np.ndarray, np.ndarray]:
    pos = np.zeros((records, N_BINS), dtype=np.int64)
    neg = np.zeros((records, N_BINS), dtype=np.int64)
    for r in range(records):
        np.add.at(pos[r], rng.integers(300, N_BINS, 200), 1)
        np.add.at(neg[r], rng.integers(0, 800, 500), 1)
    return pos, neg


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 4))
def test_the_vectorised_sweep_equals_the_official_one(seed: int, sparsity: int) -> None:
    rng = np.random.default_rng(seed)
    pos = rng.integers(0, 3, (5, N_BINS)) * (rng.random((5, N_BINS)) < 1 / sparsity)
    neg = rng.integers(0, 3, (5, N_BINS)) * (rng.random((5, N_BINS)) < 1 / sparsity)
    batch = auprc_from_histograms_batch(pos, neg)
    for row in range(5):
        official, _ = auc_from_histograms(pos[row], neg[row])
        if np.isnan(official):
            assert np.isnan(batch[row])
        else:
            assert batch[row] == pytest.approx(official, rel=1e-12, abs=1e-15)


def test_the_interval_holds_the_official_estimate_and_is_reproducible() -> None:
    pos, neg = histograms(np.random.default_rng(1), 12)
    first = bootstrap_gross_auprc(pos, neg, n_resamples=300, seed=5)
    again = bootstrap_gross_auprc(pos, neg, n_resamples=300, seed=5)
    official, _ = auc_from_histograms(pos.sum(axis=0), neg.sum(axis=0))
    assert first.estimate == official
    assert first.low <= official <= first.high
    assert (first.low, first.high) == (again.low, again.high)


def test_identical_records_give_a_zero_width_interval() -> None:
    pos, neg = histograms(np.random.default_rng(2), 1)
    interval = bootstrap_gross_auprc(np.repeat(pos, 6, 0), np.repeat(neg, 6, 0), n_resamples=50)
    assert interval.low == pytest.approx(interval.high)


def test_mismatched_histograms_are_refused() -> None:
    with pytest.raises(MetricInputError, match="records"):
        bootstrap_gross_auprc(np.zeros((2, N_BINS)), np.zeros((3, N_BINS)))
