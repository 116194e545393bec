"""Synthetic mixed-type tables with a hidden binary target (pure numpy, seeded).

Each row has a latent class; numerical columns shift with it, categorical columns are drawn
with class-dependent probabilities, and a time column (milliseconds since the epoch) puts
positives more often in the evening. Some values are missing (empty in the file), as in real
AutoWSL tables. The column types are the original datasets' (``num``, ``cat`` and ``time``:
no ``multi-cat`` column, which the prize-winning entries never handled), named by type prefix
and a 1-based number (``n_1``, ``c_1``, ``t_1``), and categorical values are integer ids
(``17``), which 2019 code turns into features with ``int(x)``. Every draw comes from one
``numpy.random.Generator``, so a seed gives the same table byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPOCH_MS = 1_546_300_800_000  # 2019-01-01T00:00:00Z, the AutoWSL year
DAY_MS = 86_400_000
MISSING_RATE = 0.03


@dataclass(frozen=True, slots=True)
class Table:
    """Columns (name → strings as written in the file), their schema and the true labels."""

    columns: dict[str, list[str]]
    schema: dict[str, str]
    labels: np.ndarray


def _number(value: float) -> str:
    return "" if np.isnan(value) else f"{value:.4f}"


def _numeric(rng: np.random.Generator, y: np.ndarray, shift: float) -> list[str]:
    values = rng.normal(size=y.size) + shift * y
    values[rng.random(y.size) < MISSING_RATE] = np.nan
    return [_number(v) for v in values]


def _categorical(rng: np.random.Generator, y: np.ndarray, levels: int) -> list[str]:
    """Integer ids ``1`` … ``levels`` whose frequencies differ between the classes.

    Missing values are empty (2019 code fills them with ``"0"``, so ids start at 1).
    """
    base = rng.dirichlet(np.ones(levels))
    tilt = rng.dirichlet(np.ones(levels))
    out = []
    for label, draw, gap in zip(y, rng.random(y.size), rng.random(y.size), strict=True):
        probs = tilt if label else base
        code = int(np.searchsorted(np.cumsum(probs), draw, side="right"))
        out.append("" if gap < MISSING_RATE else str(min(code, levels - 1) + 1))
    return out


def _times(rng: np.random.Generator, y: np.ndarray) -> list[str]:
    """Milliseconds since the epoch over one year; positives lean to the evening."""
    days = rng.integers(0, 365, size=y.size)
    hours = np.where(y == 1, rng.normal(19.0, 3.0, y.size), rng.normal(11.0, 4.0, y.size))
    millis = days * DAY_MS + (np.mod(hours, 24.0) * 3_600_000).astype(np.int64)
    return [str(EPOCH_MS + int(ms)) for ms in millis]


def make_table(rng: np.random.Generator, rows: int, positive_rate: float) -> Table:
    """A table of ``rows`` rows with every column type and its true 0/1 labels."""
    y = (rng.random(rows) < positive_rate).astype(np.int64)
    shifts = rng.uniform(0.3, 1.0, size=4) * rng.choice([-1.0, 1.0], size=4)
    columns = {f"n_{i}": _numeric(rng, y, float(s)) for i, s in enumerate(shifts, start=1)}
    columns["n_5"] = _numeric(rng, y, 0.0)  # noise: no shift
    columns["c_1"] = _categorical(rng, y, 6)
    columns["c_2"] = _categorical(rng, y, 12)
    columns["c_3"] = _categorical(rng, y, 40)
    columns["t_1"] = _times(rng, y)
    kinds = {"n": "num", "c": "cat", "t": "time"}
    schema = {name: kinds[name[0]] for name in columns}
    return Table(columns, schema, y)
