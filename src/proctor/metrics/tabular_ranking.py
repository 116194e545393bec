"""Mean average precision at k of ranked predictions (Kaggle's MAP@K).

Each row has a set of relevant items (``actual``) and a ranked list of predicted items
(``predicted``, best first). A row's average precision at k is the sum, over the first ``k``
predictions, of the precision at each position holding a relevant item not predicted before,
divided by ``min(len(actual), k)``; a row with no relevant item scores 0. The result is the
mean over rows; higher is better. Equal to the reference definition
(``tests/metrics/test_metrics_tabular.py``): scikit-learn has no MAP@K.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from proctor.metrics._validation import MetricInputError


def average_precision_at_k(actual: Sequence[str], predicted: Sequence[str], *, k: int) -> float:
    """One row's average precision over its first ``k`` predictions."""
    if not actual:
        return 0.0
    relevant = set(actual)
    seen: set[str] = set()
    hits = 0
    total = 0.0
    for position, item in enumerate(predicted[:k], start=1):
        if item in relevant and item not in seen:
            hits += 1
            total += hits / position
        seen.add(item)
    return total / min(len(relevant), k)


def mean_average_precision_at_k(
    actual: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]], *, k: int
) -> float:
    """Mean over rows of :func:`average_precision_at_k`."""
    if k < 1:
        raise MetricInputError(f"k must be at least 1, not {k}")
    if len(actual) != len(predicted):
        raise MetricInputError(f"{len(actual)} rows of actual items, {len(predicted)} predicted")
    if not actual:
        raise MetricInputError("no rows: actual and predicted are empty")
    scores = [average_precision_at_k(a, p, k=k) for a, p in zip(actual, predicted, strict=True)]
    return float(np.mean(scores))
