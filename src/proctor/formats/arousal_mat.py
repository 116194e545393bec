"""The PhysioNet 2018 reference files: reader and writer of ``RECORD-arousal.mat``.

``RECORD-arousal.mat`` (2018) is a MATLAB v7.3 file, i.e. HDF5 behind a 512-byte MATLAB header;
the per-sample labels are the dataset ``data/arousals`` (>0 target arousal, 0 non-arousal, <0
not scored). The official scorer reads it with ``numpy.ravel(h5py.File(f)['data']['arousals'])``.
"""

from __future__ import annotations

import time
from pathlib import Path

import h5py
import numpy as np
import numpy.typing as npt

from proctor.errors import InputFileError

USERBLOCK = 512
"""Bytes before the HDF5 superblock in a MATLAB v7.3 file (the MATLAB header lives there)."""
_HEADER_TEXT = 116
"""Bytes of descriptive text at the start of the MATLAB header."""


def read_arousal_reference(path: Path) -> np.ndarray:
    """The ``data/arousals`` vector of a 2018 ``-arousal.mat`` file, flattened, as float64.

    Raises :class:`InputFileError` when the file is missing, not HDF5 (MATLAB v7.3), or has no
    ``data/arousals`` dataset.
    """
    path = Path(path)
    if not path.is_file():
        raise InputFileError(f"{path}: reference file not found")
    try:
        with h5py.File(path, "r") as handle:
            node = handle.get("data/arousals")
            if not isinstance(node, h5py.Dataset):
                raise InputFileError(
                    f"{path}: no dataset 'data/arousals'; a 2018 reference must be a "
                    "RECORD-arousal.mat file as distributed with the challenge data"
                )
            values = np.ravel(node[()])
    except OSError as err:
        raise InputFileError(
            f"{path}: not a MATLAB v7.3 (HDF5) file ({err}); save it with "
            "save(..., '-v7.3') or write it with proctor's write_arousal_reference"
        ) from err
    if values.dtype.kind not in "biuf":
        raise InputFileError(f"{path}: 'data/arousals' holds {values.dtype}, expected numbers")
    return values.astype(np.float64, copy=False)


def _matlab_header() -> bytes:
    """The 128-byte header MATLAB writes at the start of a v7.3 file's userblock."""
    created = time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(0))
    text = f"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: {created} HDF5 schema 1.00 ."
    header = text.encode("ascii").ljust(_HEADER_TEXT, b" ")
    return header + b" " * 8 + b"\x00\x02" + b"IM"


def write_arousal_reference(path: Path, arousals: npt.ArrayLike) -> None:
    """Write ``arousals`` as a MATLAB v7.3 ``-arousal.mat`` file (``data/arousals``, double).

    The vector is stored as MATLAB's N×1 column (HDF5 shape (1, N)) inside a struct ``data``,
    behind the MATLAB header, so h5py, ``scipy.io.matlab.matfile_version`` and the official
    scorer read it like a file from the challenge. Compressed (gzip + shuffle), as MATLAB
    writes v7.3 files.
    """
    values = np.asarray(arousals, dtype=np.float64).ravel()
    path = Path(path)
    with h5py.File(path, "w", userblock_size=USERBLOCK) as handle:
        group = handle.create_group("data")
        group.attrs.create("MATLAB_class", np.bytes_("struct"))
        dataset = group.create_dataset(
            "arousals",
            data=values.reshape(1, -1),
            compression="gzip",
            shuffle=True,
            chunks=True,
            track_times=False,
        )
        dataset.attrs.create("MATLAB_class", np.bytes_("double"))
    with path.open("r+b") as raw:
        raw.write(_matlab_header().ljust(USERBLOCK, b"\x00"))
