"""Compare a quiz output with the answer the entry ships, as PhysioNet's quiz stage did."""

from __future__ import annotations

import math

from proctor.spec.protocols import CompareSpec


def compare_answer(output: bytes, answer: bytes, spec: CompareSpec) -> str | None:
    """Return None when ``output`` matches ``answer`` under ``spec``, else what differs first.

    ``exact`` compares bytes; ``lines`` compares stripped lines (CRLF and LF alike);
    ``numeric`` compares one number per line within ``spec.tolerance``.
    """
    if spec.kind == "exact":
        return None if output == answer else _first_byte_difference(output, answer)
    out_lines = _lines(output)
    ans_lines = _lines(answer)
    if len(out_lines) != len(ans_lines):
        return f"{len(out_lines)} lines written, {len(ans_lines)} expected"
    for number, (got, want) in enumerate(zip(out_lines, ans_lines, strict=True), start=1):
        if spec.kind == "lines":
            if got != want:
                return f"line {number}: {_clip(got)!r} written, {_clip(want)!r} expected"
            continue
        problem = _numeric_difference(got, want, spec.tolerance)
        if problem:
            return f"line {number}: {problem}"
    return None


def _lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", errors="replace")
    lines = [line.strip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _numeric_difference(got: str, want: str, tolerance: float) -> str | None:
    try:
        got_value = float(got)
    except ValueError:
        return f"{_clip(got)!r} is not a number"
    try:
        want_value = float(want)
    except ValueError:
        return f"the shipped answer {_clip(want)!r} is not a number"
    if not math.isfinite(want_value):
        return f"the shipped answer {_clip(want)!r} is not a finite number: fix your answers file"
    if math.isnan(got_value) or abs(got_value - want_value) > tolerance:
        return f"{got} written, {want} expected (tolerance {tolerance:g})"
    return None


def _first_byte_difference(output: bytes, answer: bytes) -> str:
    for index, (a, b) in enumerate(zip(output, answer, strict=False)):
        if a != b:
            return f"differs from the shipped answer at byte {index + 1}"
    return f"{len(output)} bytes written, {len(answer)} expected"


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
