"""Compare a quiz output with the answer the entry ships, as PhysioNet's quiz stage did.

Both files are read in blocks of lines, never whole, and numbers are parsed a block at a time
in C (numpy), so a shipped answer of millions of short lines costs neither memory nor minutes
(answers are capped at the output size limit before this runs).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from proctor.protocols.compare_json import compare_json
from proctor.spec.protocols import Strict


class CompareSpec(Strict):
    """How quiz outputs are compared with the answers shipped in the entry.

    ``exact``: byte for byte (PhysioNet 2014's ``cmp``). ``lines``: line by line, ignoring line
    endings and surrounding white space (2017's ``answers.txt``). ``numeric``: one number per
    line, equal within ``tolerance`` (absolute). ``json``: one JSON document each, equal as
    values (key order and spacing ignored), numbers within ``tolerance``.
    """

    kind: Literal["exact", "lines", "numeric", "json"] = "exact"
    tolerance: float = Field(default=0.0, ge=0.0, strict=True)


CHUNK = 1 << 20
BLOCK_LINES = 1 << 16
Stream = io.BufferedIOBase | io.BytesIO
Opener = Callable[[], Stream]


def compare_answer(output: bytes, answer: bytes, spec: CompareSpec) -> str | None:
    """Return None when ``output`` matches ``answer`` under ``spec``, else what differs first.

    ``exact`` compares bytes; ``lines`` compares stripped lines (CRLF and LF alike; trailing
    empty lines ignored); ``numeric`` compares one number per line within ``spec.tolerance``;
    ``json`` compares two JSON documents as values, numbers within ``spec.tolerance``.
    """
    return _compare(lambda: io.BytesIO(output), lambda: io.BytesIO(answer), spec)


def compare_files(output: Path, answer: Path, spec: CompareSpec) -> str | None:
    """:func:`compare_answer` on two files, read as streams."""
    return _compare(lambda: output.open("rb"), lambda: answer.open("rb"), spec)


def _compare(open_output: Opener, open_answer: Opener, spec: CompareSpec) -> str | None:
    if spec.kind == "json":
        with open_output() as got, open_answer() as want:
            return compare_json(got.read(), want.read(), spec.tolerance)
    if spec.kind == "exact":
        with open_output() as got, open_answer() as want:
            return _first_byte_difference(got, want)
    with open_output() as got, open_answer() as want:
        written, expected = _meaningful_lines(got), _meaningful_lines(want)
    if written != expected:
        return f"{written} lines written, {expected} expected"
    with open_output() as got, open_answer() as want:
        first = 1
        for mine, theirs in zip(_blocks(got, written), _blocks(want, written), strict=True):
            problem = _block_difference(mine, theirs, spec)
            if problem is not None:
                index, text = problem
                return f"line {first + index}: {text}"
            first += len(mine)
    return None


def _raw_lines(handle: Stream) -> Iterator[list[bytes]]:
    """The file's lines in lists of about a chunk each (line endings dropped, not stripped)."""
    carry = b""
    while chunk := handle.read(CHUNK):
        lines = (carry + chunk).split(b"\n")
        carry = lines.pop()
        if lines:
            yield lines
    if carry:
        yield [carry]


def _meaningful_lines(handle: Stream) -> int:
    """How many lines count: up to the last one that is not blank."""
    total = last = 0
    for lines in _raw_lines(handle):
        for index in range(len(lines) - 1, -1, -1):
            if lines[index].strip():
                last = total + index + 1
                break
        total += len(lines)
    return last


def _blocks(handle: Stream, count: int) -> Iterator[list[bytes]]:
    """The first ``count`` lines, stripped, in blocks of ``BLOCK_LINES``."""
    pending: list[bytes] = []
    left = count
    for lines in _raw_lines(handle):
        pending.extend(line.strip() for line in lines[:left])
        left -= min(left, len(lines))
        while len(pending) >= BLOCK_LINES:
            yield pending[:BLOCK_LINES]
            pending = pending[BLOCK_LINES:]
        if not left:
            break
    if pending:
        yield pending


def _block_difference(
    got: list[bytes], want: list[bytes], spec: CompareSpec
) -> tuple[int, str] | None:
    """(index, what differs) of the first differing line of two equally long blocks."""
    if spec.kind == "lines":
        for index, (mine, theirs) in enumerate(zip(got, want, strict=True)):
            if mine != theirs:
                shown, expected = _text(mine), _text(theirs)
                return index, f"{_clip(shown)!r} written, {_clip(expected)!r} expected"
        return None
    try:
        values = np.array(got, dtype=np.bytes_).astype(np.float64)
        wanted = np.array(want, dtype=np.bytes_).astype(np.float64)
    except ValueError:
        return _first_numeric_difference(got, want, spec.tolerance)
    bad = ~np.isfinite(wanted) | np.isnan(values) | (np.abs(values - wanted) > spec.tolerance)
    if not bad.any():
        return None
    return _first_numeric_difference(got, want, spec.tolerance)


def _first_numeric_difference(
    got: list[bytes], want: list[bytes], tolerance: float
) -> tuple[int, str] | None:
    for index, (mine, theirs) in enumerate(zip(got, want, strict=True)):
        problem = _numeric_difference(_text(mine), _text(theirs), tolerance)
        if problem:
            return index, problem
    return None


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


def _first_byte_difference(got: Stream, want: Stream) -> str | None:
    offset = 0
    while True:
        a, b = got.read(CHUNK), want.read(CHUNK)
        if a == b:
            if not a:
                return None
            offset += len(a)
            continue
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return f"differs from the shipped answer at byte {offset + index + 1}"
        written = offset + len(a) + _rest(got)
        expected = offset + len(b) + _rest(want)
        return f"{written} bytes written, {expected} expected"


def _rest(handle: Stream) -> int:
    return sum(len(chunk) for chunk in iter(lambda: handle.read(CHUNK), b""))


def _text(line: bytes) -> str:
    return line.decode("utf-8", errors="replace")


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
