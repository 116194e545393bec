"""An EvalAI leaderboard as Proctor metrics: the columns, their directions, their precision.

A leaderboard's ``schema.labels`` are its columns, ``default_order_by`` first (EvalAI ranks on
it, in the order of the split's ``is_leaderboard_order_descending``; one that is no label but
a key the script returns is the first column all the same, warned); the other labels take
their direction from ``schema.metadata.LABEL.sort_ascending``; where the bundle gives none,
a name read as an error or a distance is lower-is-better, warned (``directions``). A split's
``leaderboard_decimal_precision`` (EvalAI's default 2) is how many digits its metrics show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proctor.errors import ConfigError
from proctor.services.local.bundle_import.directions import unsaid_direction
from proctor.services.local.bundle_import.naming import metric_name
from proctor.spec.display import MAX_PRECISION

DEFAULT_PRECISION = 2
"""EvalAI's ``leaderboard_decimal_precision`` when a split gives none (as Codabench's columns)."""


def leaderboard_metrics(
    board: dict[str, Any], descending: bool | None, path: Path, warnings: list[str], script: Path
) -> dict[str, tuple[str, str]]:
    """``{metric: (label, direction)}`` of a leaderboard, its ``default_order_by`` first.

    ``descending``: the split's ``is_leaderboard_order_descending`` (None: not given; the
    ranking label's name then decides, ``directions``). ``path``: the configuration, named by
    the refusals; ``script``: the evaluation script's
    folder. A ``default_order_by`` that is no label (a real challenge ranks on ``Total``, a
    key its script returns) becomes the first column, and a warning says so.
    """
    schema = board.get("schema") or {}
    labels = [str(label) for label in schema.get("labels") or []]
    if not labels:
        raise ConfigError("a leaderboard needs schema.labels", path=path, location="leaderboard")
    order = str(schema.get("default_order_by") or labels[0])
    if order not in labels:
        labels.insert(0, order)
        warnings.append(_unlisted_order(board, order, labels[1:], script))
    labels.sort(key=lambda label: label != order)
    metadata = schema.get("metadata") or {}
    taken: set[str] = set()
    found: dict[str, tuple[str, str]] = {}
    where = f"leaderboard[{board.get('id')}].schema"
    for label in labels:
        ascending = (metadata.get(label) or {}).get("sort_ascending")
        if label == order:  # EvalAI ranks on it in the split's order, whatever metadata says
            if descending is None:
                said = "is_leaderboard_order_descending"
                way = unsaid_direction((label,), f"{where}.default_order_by", said, warnings)
                ascending = way == "lower"
            elif ascending is not None and bool(ascending) == descending:
                warnings.append(
                    f"leaderboard schema.metadata.{label}.sort_ascending {ascending!r}: "
                    "EvalAI ranks on default_order_by by the split's "
                    f"is_leaderboard_order_descending ({descending}); so does Proctor"
                )
            if descending is not None:
                ascending = not descending
        elif ascending is None:
            said = f"metadata.{label}.sort_ascending"
            ascending = unsaid_direction((label,), f"{where}.labels", said, warnings) == "lower"
        found[metric_name(label, taken)] = (label, "lower" if ascending else "higher")
    return found


def _unlisted_order(board: dict[str, Any], order: str, labels: list[str], script: Path) -> str:
    """The warning for a ``default_order_by`` that is no label: ranked on and shown anyway."""
    where = f"leaderboard[{board.get('id')}].schema.default_order_by"
    said = f"{where} {order!r} is not one of the labels ({', '.join(labels)}): the board ranks "
    said += "on it and shows it as its first column"
    if names_key(script, order):
        return said + f" (the evaluation script names {order!r}: it must return it per split)"
    return said + (
        f"; the evaluation script never names {order!r}: unless it returns that key for each "
        "split, every submission fails in scoring (the organizer's failure): check it with "
        "`proctor challenge check` and a sample, or name a label"
    )


def names_key(script: Path, key: str) -> bool:
    """Whether a Python file of the evaluation script holds ``key`` as a string literal."""
    quoted = (f'"{key}"', f"'{key}'")
    for path in sorted(script.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if any(q in text for q in quoted):
            return True
    return False


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
