"""``compare: json``: a quiz output and its shipped answer compared as JSON values.

Key order and spacing do not matter; numbers are equal within the tolerance of ``compare:
numeric``; the first difference is named by its path (``$.labels[3]``). Both documents are
capped at the output size limit before this runs.
"""

from __future__ import annotations

import json
import math

MAX_VALUES = 1_000_000
"""A compared document holds at most this many values (counted as its ``,``, ``[`` and ``{``).

Parsed, ``[[],[],...]`` takes some 24 times its size in memory: 64 MiB of output would take
1.5 GiB of the worker's. A million values take some 100 MiB.
"""


def _values(document: bytes) -> int:
    return document.count(b",") + document.count(b"[") + document.count(b"{")


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def compare_json(output: bytes, answer: bytes, tolerance: float) -> str | None:
    """None when two JSON documents are equal as values (numbers within ``tolerance``)."""
    if _values(answer) > MAX_VALUES:
        return f"the shipped answer has more than {MAX_VALUES:,} values: compare a smaller answer"
    if _values(output) > MAX_VALUES:
        return f"the output has more than {MAX_VALUES:,} values (counted as its `,`, `[` and `{{`)"
    try:
        expected = json.loads(answer.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        return f"the shipped answer is not JSON ({_clip(str(err), 80)}): fix your answers file"
    try:
        written = json.loads(output.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        return f"the output is not JSON: {_clip(str(err), 80)}"
    try:
        return _difference(written, expected, "$", tolerance)
    except RecursionError:
        return "the output is nested too deeply to compare"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _difference(got: object, want: object, path: str, tolerance: float) -> str | None:
    if _is_number(got) and _is_number(want):
        a, b = float(got), float(want)  # type: ignore[arg-type]
        if math.isfinite(b) and not math.isnan(a) and abs(a - b) <= tolerance:
            return None
        return f"{path}: {got} written, {want} expected (tolerance {tolerance:g})"
    if isinstance(got, dict) and isinstance(want, dict):
        return _dict_difference(got, want, path, tolerance)
    if isinstance(got, list) and isinstance(want, list):
        return _list_difference(got, want, path, tolerance)
    if type(got) is not type(want) or got != want:
        shown, expected = _clip(json.dumps(got)), _clip(json.dumps(want))
        return f"{path}: {shown} written, {expected} expected"
    return None


def _dict_difference(
    got: dict[str, object], want: dict[str, object], path: str, tolerance: float
) -> str | None:
    missing = next((key for key in want if key not in got), None)
    if missing is not None:
        return f"{path}: key {_clip(missing)!r} is missing"
    extra = next((key for key in got if key not in want), None)
    if extra is not None:
        return f"{path}: key {_clip(extra)!r} is not expected"
    for key, value in want.items():
        found = _difference(got[key], value, f"{path}.{_clip(key)}", tolerance)
        if found is not None:
            return found
    return None


def _list_difference(
    got: list[object], want: list[object], path: str, tolerance: float
) -> str | None:
    if len(got) != len(want):
        return f"{path}: {len(got)} items written, {len(want)} expected"
    for index, (mine, theirs) in enumerate(zip(got, want, strict=True)):
        found = _difference(mine, theirs, f"{path}[{index}]", tolerance)
        if found is not None:
            return found
    return None
