"""An EvalAI leaderboard as Proctor metrics: the columns, their directions, their precision.

A leaderboard's ``schema.labels`` are its columns, ``default_order_by`` first (EvalAI ranks on
it, in the order of the split's ``is_leaderboard_order_descending``); the other labels take
their direction from ``schema.metadata.LABEL.sort_ascending``. A split's
``leaderboard_decimal_precision`` (EvalAI's default 2) is how many digits its metrics show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proctor.errors import ConfigError
from proctor.services.local.bundle_import.naming import metric_name
from proctor.spec.display import MAX_PRECISION

DEFAULT_PRECISION = 2
"""EvalAI's ``leaderboard_decimal_precision`` when a split gives none (as Codabench's columns)."""


def leaderboard_metrics(
    board: dict[str, Any], descending: bool, path: Path, warnings: list[str]
) -> dict[str, tuple[str, str]]:
    """``{metric: (label, direction)}`` of a leaderboard, its ``default_order_by`` first.

    ``path``: the configuration, named by the refusals.
    """
    schema = board.get("schema") or {}
    labels = [str(label) for label in schema.get("labels") or []]
    if not labels:
        raise ConfigError("a leaderboard needs schema.labels", path=path, location="leaderboard")
    order = str(schema.get("default_order_by") or labels[0])
    if order not in labels:  # EvalAI refuses it ("incorrect_default_order_by")
        raise ConfigError(
            f"default_order_by {order!r} is not one of the labels ({', '.join(labels)}): "
            "EvalAI refuses such a leaderboard; name the label it ranks on, or add it "
            "to schema.labels",
            path=path,
            location=f"leaderboard[{board.get('id')}].schema.default_order_by",
        )
    labels.sort(key=lambda label: label != order)
    metadata = schema.get("metadata") or {}
    taken: set[str] = set()
    found: dict[str, tuple[str, str]] = {}
    for label in labels:
        ascending = (metadata.get(label) or {}).get("sort_ascending")
        if label == order:  # EvalAI ranks on it in the split's order, whatever metadata says
            if ascending is not None and bool(ascending) == descending:
                warnings.append(
                    f"leaderboard schema.metadata.{label}.sort_ascending {ascending!r}: "
                    "EvalAI ranks on default_order_by by the split's "
                    f"is_leaderboard_order_descending ({descending}); so does Proctor"
                )
            ascending = not descending
        found[metric_name(label, taken)] = (label, "lower" if ascending else "higher")
    return found


def note_precision(
    link: dict[str, Any],
    metrics: dict[str, tuple[str, str]],
    where: str,
    warnings: list[str],
    precision: dict[str, int],
) -> None:
    """Record in ``precision`` the digits a split's metrics show (first split wins)."""
    digits = link.get("leaderboard_decimal_precision")
    if digits is None:
        digits = DEFAULT_PRECISION
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        warnings.append(f"{where}.leaderboard_decimal_precision {digits!r}: left out")
        return
    for metric in metrics:
        precision.setdefault(metric, min(digits, MAX_PRECISION))
