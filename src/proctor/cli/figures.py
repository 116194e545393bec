"""Numbers as people read them: scores rounded to six decimals, counts as integers.

Only the human output rounds; ``--json`` keeps every digit of every score. Which figures are
counts is declared (``MetricDeclaration.count``; a report's ``count_metrics``), never guessed
from a metric's name; a JSON answer already carries a count as an integer.
"""

from __future__ import annotations

import math


def shown_number(value: float | None, *, count: bool = False) -> str:
    """``value`` for a person: ``0.824658``; ``12`` for a count or an integer; ``nan``."""
    if value is None or math.isnan(value):
        return "nan"
    if isinstance(value, int) or (count and math.isfinite(value)):
        return f"{int(value)}"
    return f"{value:.6f}"
