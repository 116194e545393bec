"""A small writer of EDF files (European Data Format, 1992): what the 2026 records are stored as.

An EDF file is a 256-byte ASCII header, 256 bytes more per signal (its label, physical and
digital ranges, samples per data record), then data records of little-endian 16-bit integers,
each signal's samples in turn. Every signal here is written with data records of one second,
so a signal's sampling frequency is its samples per record. Physical values map linearly onto
the full 16-bit digital range of each signal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DIGITAL_MIN = -32768
DIGITAL_MAX = 32767


@dataclass(frozen=True, slots=True)
class EdfSignal:
    """One signal: its label, unit, sampling frequency (Hz, an integer) and physical values."""

    label: str
    unit: str
    frequency: int
    values: np.ndarray


def _field(value: object, width: int) -> bytes:
    """An ASCII header field, left-aligned and padded with spaces to ``width``."""
    text = str(value)
    if len(text) > width:
        raise ValueError(f"EDF header field {text!r} is longer than {width} characters")
    return text.ljust(width).encode("ascii")


def _number(value: float, width: int = 8) -> bytes:
    """A number in at most ``width`` characters (EDF's physical minima and maxima)."""
    for digits in range(6, -1, -1):
        text = f"{value:.{digits}f}".rstrip("0").rstrip(".") if digits else f"{value:.0f}"
        if len(text) <= width:
            return _field(text, width)
    raise ValueError(f"{value} does not fit an EDF field of {width} characters")


def _range(values: np.ndarray) -> tuple[float, float]:
    """A physical range holding ``values`` that EDF's 8-character fields can spell."""
    low, high = float(np.min(values)), float(np.max(values))
    if high <= low:
        high = low + 1.0
    return float(np.floor(low)), float(np.ceil(high))


def write_edf(path: Path, signals: Sequence[EdfSignal], *, seconds: int) -> None:
    """Write ``signals`` (each ``frequency * seconds`` values long) as the EDF file ``path``."""
    header = bytearray()
    header += _field("0", 8)
    header += _field("X X X X", 80)  # patient: code, sex, birth date, name all unknown
    header += _field("Startdate X X X X", 80)
    header += _field("01.01.01", 8) + _field("00.00.00", 8)
    header += _field(256 * (len(signals) + 1), 8)
    header += _field("", 44)
    header += _field(seconds, 8) + _field(1, 8) + _field(len(signals), 4)
    ranges = [_range(signal.values) for signal in signals]
    columns: list[list[bytes]] = [
        [_field(s.label, 16) for s in signals],
        [_field("", 80) for _ in signals],
        [_field(s.unit, 8) for s in signals],
        [_number(low) for low, _ in ranges],
        [_number(high) for _, high in ranges],
        [_field(DIGITAL_MIN, 8) for _ in signals],
        [_field(DIGITAL_MAX, 8) for _ in signals],
        [_field("", 80) for _ in signals],
        [_field(s.frequency, 8) for s in signals],
        [_field("", 32) for _ in signals],
    ]
    for column in columns:
        header += b"".join(column)
    digital = []
    for signal, (low, high) in zip(signals, ranges, strict=True):
        if signal.values.shape != (signal.frequency * seconds,):
            raise ValueError(f"signal {signal.label} must hold {signal.frequency * seconds} values")
        scaled = (signal.values - low) / (high - low) * (DIGITAL_MAX - DIGITAL_MIN) + DIGITAL_MIN
        codes = np.clip(np.round(scaled), DIGITAL_MIN, DIGITAL_MAX).astype("<i2")
        digital.append(codes.reshape(seconds, signal.frequency))
    records = np.concatenate(digital, axis=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(header) + records.tobytes())
