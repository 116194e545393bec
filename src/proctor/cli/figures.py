"""Numbers as people read them: scores rounded to six decimals, counts as integers.

Only the human output rounds; ``--json`` keeps every digit of every score.
"""

from __future__ import annotations

import math


def shown_number(metric: str, value: float | None) -> str:
    """``value`` of ``metric`` for a person: ``0.824658``, ``12`` (records, bytes), ``nan``."""
    if value is None or math.isnan(value):
        return "nan"
    if metric.startswith("records") or metric.endswith("_bytes"):
        return f"{int(value)}"
    if isinstance(value, int):
        return str(value)
    return f"{value:.6f}"
