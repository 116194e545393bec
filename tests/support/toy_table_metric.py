"""A test plug-in: a new table metric in one module outside Proctor's package.

``hamming_loss``: the share of rows whose predicted label is not the true one (lower is
better). Nothing in ``proctor`` knows it: the :class:`TableMetric` carries its name, function,
kind, direction and summary, and a distribution declares it as the entry point
``hamming_loss = toy_table_metric:HAMMING_LOSS`` of the group ``proctor.table_metrics``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from proctor.scoring.table_metrics import MetricKind, TableMetric
from proctor.types import Direction


def hamming_loss(y_true: npt.ArrayLike, y_pred: npt.ArrayLike) -> float:
    """The share of rows whose ``y_pred`` label differs from ``y_true``'s."""
    return float(np.mean(np.asarray(y_true) != np.asarray(y_pred)))


HAMMING_LOSS = TableMetric(
    "hamming_loss", hamming_loss, MetricKind.LABELS, Direction.LOWER, "share of wrong labels"
)

NOT_A_METRIC = "hamming_loss"
"""What a broken plug-in names: no :class:`TableMetric`."""
