r"""WFDB records as the PhysioNet challenges of 2017 and 2018 distributed them: .hea + .mat.

The signal file is a MATLAB v4 matrix ``val`` (channels × samples, int16) that
``scipy.io.loadmat`` reads; its 24-byte v4 header (5 int32 fields and the name ``val\0``) is
followed by the samples in column-major order, i.e. the channels interleaved per sample, which is
exactly WFDB format 16. The header therefore names the file with format ``16+24`` (format 16
after a 24-byte prefix), so WFDB readers read the same ``.mat`` without MATLAB.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from proctor.errors import InputFileError

V4_HEADER_BYTES = 24
"""Bytes before the samples: type, rows, columns, imaginary flag, name length, the name."""
_V4_INT16_LITTLE = 30
"""MATLAB v4 type code: little-endian (0), full matrix, int16 (3) → 0·1000 + 0·100 + 3·10 + 0."""


@dataclass(frozen=True)
class SignalSpec:
    """One channel of a record: description, physical units, ADC gain and baseline.

    ``gain`` is ADC units per physical unit and ``baseline`` the ADC value of physical zero,
    as WFDB headers write them (2018's SaO2: ``655.35(-32768)/%``; 0 is not written).
    """

    name: str
    units: str
    gain: float
    baseline: int = 0

    @property
    def header_gain(self) -> str:
        """The header's gain field: ``1/uV``, ``655.35(-32768)/%``."""
        shown = f"({self.baseline})" if self.baseline else ""
        return f"{self.gain:g}{shown}/{self.units}"


def _v4_header(channels: int, samples: int) -> bytes:
    return struct.pack("<5i", _V4_INT16_LITTLE, channels, samples, 0, 4) + b"val\x00"


def _checksum(column: npt.NDArray[np.int16]) -> int:
    """WFDB's 16-bit signed checksum of one channel's samples."""
    total = int(column.astype(np.int64).sum()) & 0xFFFF
    return total - 0x10000 if total >= 0x8000 else total


def write_mat_record(
    directory: Path,
    name: str,
    digital: npt.NDArray[np.int16],
    *,
    fs: float,
    signals: Sequence[SignalSpec],
) -> None:
    """Write ``name.hea`` and ``name.mat`` for ``digital`` (samples × channels, int16).

    The layout of the 2017/2018 challenge files: ``val`` in the ``.mat``, format ``16+24``
    in the header, one line per channel with gain, initial value and checksum.
    """
    values = np.asarray(digital)
    if values.ndim != 2 or values.shape[1] != len(signals) or values.dtype != np.int16:
        raise ValueError(f"{name}: expected int16 samples × {len(signals)} channels")
    n_samples = values.shape[0]
    with (directory / f"{name}.mat").open("wb") as handle:
        handle.write(_v4_header(len(signals), n_samples))
        handle.write(np.ascontiguousarray(values).astype("<i2").tobytes())
    lines = [f"{name} {len(signals)} {fs:g} {n_samples}"]
    for index, spec in enumerate(signals):
        column = values[:, index]
        first = int(column[0]) if n_samples else 0
        lines.append(
            f"{name}.mat 16+{V4_HEADER_BYTES} {spec.header_gain} 16 0 {first} "
            f"{_checksum(column)} 0 {spec.name}"
        )
    (directory / f"{name}.hea").write_text("\n".join(lines) + "\n", encoding="ascii")


def read_mat_signals(path: Path) -> npt.NDArray[np.int16]:
    """The samples (samples × channels, the transpose of ``val``) of a 2017/2018 ``.mat``.

    Raises :class:`InputFileError` naming the file when it is not such a MATLAB v4 int16 file.
    """
    data = Path(path).read_bytes()
    if len(data) < V4_HEADER_BYTES:
        raise InputFileError(f"{path}: shorter than a MATLAB v4 header")
    kind, rows, cols, imaginary, name_len = struct.unpack_from("<5i", data)
    name = data[20 : 20 + name_len]
    if kind != _V4_INT16_LITTLE or imaginary or name != b"val\x00":
        raise InputFileError(
            f"{path}: not a MATLAB v4 int16 matrix 'val' (write it with write_mat_record)"
        )
    body = np.frombuffer(data, dtype="<i2", offset=V4_HEADER_BYTES)
    if body.size != rows * cols:
        raise InputFileError(f"{path}: {body.size} samples where the header says {rows}×{cols}")
    return body.reshape(cols, rows).astype(np.int16)
