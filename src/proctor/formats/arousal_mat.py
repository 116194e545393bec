"""The PhysioNet 2018 reference files: reader and writer of ``RECORD-arousal.mat``.

``RECORD-arousal.mat`` (2018) is a MATLAB v7.3 file, i.e. HDF5 behind a 512-byte MATLAB header;
the per-sample labels are the dataset ``data/arousals`` (>0 target arousal, 0 non-arousal, <0
not scored). The official scorer reads it with ``numpy.ravel(h5py.File(f)['data']['arousals'])``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
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


SLEEP_STAGES = ("wake", "nonrem1", "nonrem2", "nonrem3", "rem", "undefined")
"""The 0/1 vectors of ``data/sleep_stages`` in a 2018 ``-arousal.mat`` file."""


def _matlab_dataset(group: h5py.Group, name: str, values: np.ndarray) -> None:
    """One double vector as the 2018 files hold it: h5py shape (N, 1), gzip + shuffle."""
    dataset = group.create_dataset(
        name,
        data=values.reshape(-1, 1),
        compression="gzip",
        shuffle=True,
        chunks=True,
        track_times=False,
    )
    dataset.attrs.create("MATLAB_class", np.bytes_("double"))


def write_arousal_reference(
    path: Path,
    arousals: npt.ArrayLike,
    sleep_stages: Mapping[str, npt.ArrayLike] | None = None,
) -> None:
    """Write a MATLAB v7.3 ``-arousal.mat`` file as the 2018 challenge distributed it.

    ``data/arousals`` (double) reads in h5py with shape (N, 1), as in the challenge files (the
    organizers' sample code appends it to the N × channels signal matrix along axis 1);
    ``sleep_stages`` (each of :data:`SLEEP_STAGES`, N values 0/1) go to
    ``data/sleep_stages/NAME`` with the same shape. Written inside a struct ``data``, behind
    the MATLAB header, so h5py, ``scipy.io.matlab.matfile_version`` and the official scorer read
    it like a file from the challenge; compressed (gzip + shuffle), as MATLAB writes v7.3 files.
    """
    values = np.asarray(arousals, dtype=np.float64).ravel()
    stages = {
        name: np.asarray(vector, dtype=np.float64).ravel()
        for name, vector in (sleep_stages or {}).items()
    }
    unknown = sorted(set(stages) - set(SLEEP_STAGES))
    wrong = sorted(name for name, vector in stages.items() if vector.size != values.size)
    if unknown or wrong:
        raise ValueError(f"sleep stages: unknown {unknown}, wrong length {wrong}")
    path = Path(path)
    with h5py.File(path, "w", userblock_size=USERBLOCK) as handle:
        group = handle.create_group("data")
        group.attrs.create("MATLAB_class", np.bytes_("struct"))
        _matlab_dataset(group, "arousals", values)
        if stages:
            stage_group = group.create_group("sleep_stages")
            stage_group.attrs.create("MATLAB_class", np.bytes_("struct"))
            for name in SLEEP_STAGES:
                if name in stages:
                    _matlab_dataset(stage_group, name, stages[name])
    with path.open("r+b") as raw:
        raw.write(_matlab_header().ljust(USERBLOCK, b"\x00"))
