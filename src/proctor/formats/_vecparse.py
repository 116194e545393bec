"""General, exact parsing of ``.vec`` lines of any layout (``0.5``, ``1``, ``5e-1``, CRLF, ...).

Each line goes through Python's own ``float()``, exactly as the official scorer's
``predictions[i] = line`` does, and the double is then rounded to float32. As there, a value is
accepted when ``numpy.histogram`` keeps it: within the float32 outer bin edges, i.e. [0, 1] plus
half a thousandth either side (``-0.0002`` counts in bin 0). Lines are split and
converted a block at a time (C-level ``bytes.split`` and ``map(float, ...)``), a few million lines
per second, which bounds memory; only a failing block is walked line by line to name the line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from proctor.metrics._validation import MetricInputError
from proctor.metrics.physionet2018 import bin_edges

_BLOCK_BYTES = 1 << 22
"""Bytes of text split and converted per step."""


class VecFormatError(MetricInputError):
    """A ``.vec`` file holds a line that is not a probability; names the file and line."""

    def __init__(self, path: Path, line: int, problem: str) -> None:
        self.path = path
        self.line = line
        # "wrong number of samples" messages of the file when the problem is a bad *value*
        # (NaN, out of range): the official scorer prints that warning before such an error.
        self.length_notes: list[str] = []
        where = f"{path}, line {line}" if line else str(path)
        super().__init__(
            f"{where}: {problem}; each line must hold one probability in [0, 1] (e.g. 0.123)"
        )


def _python_float(path: Path, text: bytes, line: int) -> float:
    """``float(text)`` as the official scorer calls it, with a clear error for bad text."""
    if not text.strip():
        raise VecFormatError(path, line, "the line is empty")
    try:
        return float(text)
    except ValueError:
        shown = text[:40].decode("utf-8", "replace")
        raise VecFormatError(path, line, f"cannot read {shown!r} as a number") from None


def _value_error(path: Path, values: np.ndarray, first_line: int) -> VecFormatError | None:
    """The error for the first NaN or out-of-range value (float32), or None if all are fine."""
    edges = bin_edges("float32")
    bad = np.flatnonzero(~((values >= edges[0]) & (values <= edges[-1])))
    if not bad.size:
        return None
    value = values[bad[0]]
    problem = (
        "the value is NaN"
        if np.isnan(value)
        else f"the value {np.format_float_positional(value)} is outside [0, 1]"
    )
    return VecFormatError(path, first_line + int(bad[0]) + 1, problem)


def _floats(path: Path, lines: list[bytes], line0: int) -> tuple[np.ndarray, VecFormatError | None]:
    """float32 values of ``lines`` and the error of a bad value among them, if any.

    ``line0`` lines of the file precede them. A line that is not a number raises at once.
    """
    try:
        values = np.fromiter(map(float, lines), dtype=np.float64, count=len(lines))
    except ValueError:
        for i, text in enumerate(lines):
            _python_float(path, text, line0 + i + 1)
        raise  # pragma: no cover - the loop above raises for the same line
    with np.errstate(over="ignore"):  # 1e39 becomes inf in float32, then fails the range check
        result = values.astype(np.float32)
    return result, _value_error(path, result, line0)


def parse_lines(
    path: Path, data: bytes, *, first_line: int, max_lines: int
) -> tuple[np.ndarray, int, bool, VecFormatError | None]:
    """Parse at most ``max_lines`` lines of ``data`` into float32.

    ``first_line`` is how many lines of the file precede ``data`` (for error messages). Returns
    the values, how many lines were parsed, whether more lines follow (those are never parsed,
    as in the official scorer), and the error of the first NaN or out-of-range value. A line
    that is not a number raises :class:`VecFormatError` at once, even after a bad value: the
    official scorer fails on such a line while reading, and checks values only afterwards.
    """
    bad: VecFormatError | None = None
    parts: list[np.ndarray] = []
    count = pos = 0
    extra = False
    while pos < len(data) and not extra:
        if count == max_lines:
            extra = True
            break
        cut = data.find(b"\n", min(pos + _BLOCK_BYTES, len(data) - 1))
        stop = len(data) if cut < 0 else cut + 1
        lines = data[pos:stop].split(b"\n")
        if not lines[-1]:
            lines.pop()
        if len(lines) > max_lines - count:
            lines, extra = lines[: max_lines - count], True
        values, problem = _floats(path, lines, first_line + count)
        parts.append(values)
        bad = bad if bad is not None else problem
        count += len(lines)
        pos = stop
    values = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    return values, count, extra, bad
