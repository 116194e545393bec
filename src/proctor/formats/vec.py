"""Fast, exact reader of PhysioNet 2018 ``.vec`` prediction files (one probability per line).

The official scorer stores ``float(line)`` of each line into a float32 array as long as the
reference, pre-filled with zeros; it never parses lines beyond that length. This reader gives
bit-identical float32 values, at several hundred million samples per second for files written
with ``%.3f`` (every line ``d.ddd⏎``): those are recognised six bytes at a time and converted
arithmetically. Any other layout (``0.5``, ``1``, ``1.0000``, ``5e-1``, CRLF, spaces) goes through
:mod:`proctor.formats._vecparse`, exact as well.

Rules: an empty or unparseable line, NaN, or a value outside [0, 1] (more than half a thousandth
beyond, which the official histogram still counts) raises :class:`VecFormatError` naming the
file and the line number. A file with fewer lines than the reference (missing samples stay 0) or
more (extra lines are ignored) emits a :class:`VecLengthWarning` "wrong number of samples" and
the message is also returned; as in the official scorer, that warning comes before the error of
a bad value (NaN, out of range), but a line that is not a number fails without it.
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from proctor.formats._vecparse import VecFormatError, parse_lines
from proctor.metrics._validation import MetricInputError
from proctor.metrics.physionet2018 import ClassCounter, bin_indices, check_labels

__all__ = [
    "VecFormatError",
    "VecLengthWarning",
    "read_vec",
    "read_vec_bins",
    "read_vec_histograms",
]

_LINE = 6
"""Bytes of one ``d.ddd⏎`` line."""
_CHUNK = 1 << 17
"""Lines per step of the fixed-width kernel (temporaries stay in the CPU cache)."""


class VecLengthWarning(UserWarning):
    """A ``.vec`` file does not hold exactly one line per reference sample."""


@dataclass(frozen=True)
class _Scan:
    """What a file holds, as far as the reference length reaches.

    ``fast`` leading ``d.ddd`` lines (already streamed to the sink), then the values ``rest`` of
    the next lines; ``lines`` read in all, whether more lines follow (``extra``), and the error
    of the first NaN or out-of-range value (``bad``), raised after the length check.
    """

    fast: int
    rest: np.ndarray
    lines: int
    extra: bool
    bad: VecFormatError | None = None


Sink = Callable[[int, np.ndarray], None]
"""Receives (index of the first sample, thousandths of a chunk); the array is reused after."""


@cache
def _thousandth_values() -> np.ndarray:
    """float32 of ``float("k/1000 written with three decimals")`` for k = 0..1000."""
    return np.array([float(f"{k / 1000:.3f}") for k in range(1001)]).astype(np.float32)


@cache
def _thousandth_bins() -> np.ndarray | None:
    """Histogram bin of each thousandth, or None when it is simply k (it is, but we check)."""
    bins = bin_indices(_thousandth_values())
    return None if np.array_equal(bins, np.arange(1001)) else bins


class _FixedWidth:
    """Converter of ``d.ddd⏎`` lines (⏎ the newline byte) with reusable scratch arrays.

    Each line is read as three little-endian 16-bit words, ``"d."``, ``"dd"``, ``"d⏎"``; after
    subtracting the ASCII of ``"0."``, ``"00"``, ``"0⏎"`` every byte must be a digit value (a
    borrow from a byte below ``'0'`` leaves a byte >= 0xCF, so it is caught as well). The
    columns are first copied out of the text (a strided copy is cheaper than a strided
    subtraction), then every step runs on contiguous 16-bit arrays.
    """

    def __init__(self, lines: int) -> None:
        self.buffer = bytearray(_LINE * lines)
        self._scratch = [np.empty(lines, dtype=np.uint16) for _ in range(4)]

    def convert(self, m: int) -> np.ndarray | None:
        """Thousandths of the first ``m`` lines in :attr:`buffer`, or None if one is not d.ddd.

        The result is a scratch array, overwritten by the next call.
        """
        words = np.frombuffer(self.buffer, dtype="<u2", count=3 * m).reshape(m, 3)
        a, b, c, d = (array[:m] for array in self._scratch)
        for column, array, ascii_zero in ((0, a, 0x2E30), (1, b, 0x3030), (2, d, 0x0A30)):
            np.copyto(array, words[:, column])
            np.subtract(array, np.uint16(ascii_zero), out=array)
        np.right_shift(b, np.uint16(8), out=c)
        np.bitwise_and(b, np.uint16(0xFF), out=b)
        if a.max() > 1 or b.max() > 9 or c.max() > 9 or d.max() > 9:
            return None
        np.multiply(a, np.uint16(1000), out=a)
        np.multiply(b, np.uint16(100), out=b)
        np.multiply(c, np.uint16(10), out=c)
        np.add(a, b, out=a)
        np.add(a, c, out=a)
        np.add(a, d, out=a)
        return None if a.max() > 1000 else a


def _stream_fixed_width(handle: io.FileIO, n: int, sink: Sink) -> bool:
    """Stream the first ``n`` lines to ``sink`` a chunk at a time; False if one is not d.ddd."""
    converter = _FixedWidth(min(_CHUNK, n))
    view = memoryview(converter.buffer)
    for start in range(0, n, _CHUNK):
        m = min(_CHUNK, n - start)
        need = _LINE * m
        got = 0
        while got < need:
            read = handle.readinto(view[got:need])
            if not read:
                return False
            got += read
        thousandths = converter.convert(m)
        if thousandths is None:
            return False
        sink(start, thousandths)
    return True


def _check_length(length: int) -> None:
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        raise MetricInputError(f"length must be a non-negative integer, got {length!r}")


def _open(path: Path) -> io.FileIO:
    try:
        return io.FileIO(path, "r")
    except OSError as err:
        raise VecFormatError(path, 0, f"cannot read the file ({err.strerror})") from err


def _scan(path: Path, length: int, sink: Sink) -> _Scan | None:
    """Stream the leading ``d.ddd`` lines to ``sink`` and parse what follows them.

    None when the file is not ``%.3f`` text after all (``sink`` may have seen part of it).
    """
    with _open(path) as handle:
        fast = min(length, os.fstat(handle.fileno()).st_size // _LINE)
        if not _stream_fixed_width(handle, fast, sink):
            return None
        if fast == length:
            return _Scan(fast, np.zeros(0, dtype=np.float32), fast, bool(handle.read(1)))
        tail = handle.read()
    rest, lines, extra, bad = parse_lines(path, tail, first_line=fast, max_lines=length - fast)
    return _Scan(fast, rest, fast + lines, extra, bad)


def _scan_general(path: Path, length: int) -> _Scan:
    """Parse the whole file line by line (any layout)."""
    with _open(path) as handle:
        data = handle.read()
    rest, lines, extra, bad = parse_lines(path, data, first_line=0, max_lines=length)
    return _Scan(0, rest, lines, extra, bad)


def _length_messages(path: Path, scan: _Scan, length: int) -> list[str]:
    """Warn about a wrong line count; then raise the scan's bad-value error, if any.

    The official scorer checks the count while reading and the values only when scoring, so a
    bad value is reported after the warning (the error carries it in ``length_notes``).
    """
    messages: list[str] = []
    if scan.lines != length or scan.extra:
        found = f"more than {length}" if scan.extra else str(scan.lines)
        messages.append(
            f"Warning: wrong number of samples in {path} ({found} lines for {length} reference "
            "samples; missing samples count as 0, extra lines are ignored)"
        )
        warnings.warn(messages[0], VecLengthWarning, stacklevel=3)
    if scan.bad is not None:
        scan.bad.length_notes = messages
        raise scan.bad
    return messages


def read_vec(path: Path, length: int) -> tuple[np.ndarray, list[str]]:
    """Read ``path`` into a float32 array of ``length`` samples, as the official scorer does.

    Returns the values and the warning messages (also emitted as :class:`VecLengthWarning`).
    Raises :class:`VecFormatError` (a ``ValueError``) naming the file and line of a bad value.
    """
    _check_length(length)
    path = Path(path)
    values = np.zeros(length, dtype=np.float32)
    table = _thousandth_values()

    def sink(start: int, thousandths: np.ndarray) -> None:
        np.take(table, thousandths, out=values[start : start + thousandths.size])

    scan = _scan(path, length, sink) or _scan_general(path, length)
    messages = _length_messages(path, scan, length)
    values[scan.fast : scan.fast + scan.rest.size] = scan.rest
    return values, messages


def read_vec_bins(path: Path, length: int) -> tuple[np.ndarray, list[str]]:
    """Like :func:`read_vec`, but return each sample's official histogram bin (uint16 0..1000).

    ``ArousalTally().add_binned(bins, labels)`` then gives the same result as scoring the
    float32 values.
    """
    _check_length(length)
    path = Path(path)
    bins = np.zeros(length, dtype=np.uint16)
    mapping = _thousandth_bins()

    def sink(start: int, thousandths: np.ndarray) -> None:
        target = bins[start : start + thousandths.size]
        target[...] = thousandths if mapping is None else mapping[thousandths]

    scan = _scan(path, length, sink) or _scan_general(path, length)
    messages = _length_messages(path, scan, length)
    bins[scan.fast : scan.fast + scan.rest.size] = bin_indices(scan.rest)
    return bins, messages


def read_vec_histograms(
    path: Path, labels: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Target and non-target counts per bin of one record, straight from the text (fastest).

    Equivalent to ``class_histograms(read_vec_bins(path, len(labels))[0], labels)`` but streams
    the file through the CPU cache without building any per-sample array. Feed the result to
    :meth:`~proctor.metrics.physionet2018.ArousalTally.add_histograms`.
    """
    truth = np.asarray(labels)
    truth = check_labels(truth, truth.shape[0] if truth.ndim == 1 else 0)
    path, length = Path(path), truth.shape[0]
    counter = ClassCounter()
    mapping = _thousandth_bins()

    def sink(start: int, thousandths: np.ndarray) -> None:
        bins = thousandths if mapping is None else mapping[thousandths]
        counter.add(bins, truth[start : start + bins.size])

    scan = _scan(path, length, sink)
    if scan is None:
        counter = ClassCounter()
        scan = _scan_general(path, length)
    messages = _length_messages(path, scan, length)
    parsed = scan.fast + scan.rest.size
    counter.add(bin_indices(scan.rest), truth[scan.fast : parsed])
    counter.add(np.zeros(length - parsed, dtype=np.uint16), truth[parsed:])
    return (*counter.histograms(), messages)
