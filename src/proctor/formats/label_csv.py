"""AutoWSL label files: a ``*.solution`` file (or a folder holding one) and prediction CSVs.

Both are CSV text whose header line names a ``label`` column; every later line is one test row.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from proctor.errors import InputFileError


def find_solution(path: Path) -> Path:
    """``path`` itself, or the single ``*.solution`` file inside the folder ``path``."""
    if path.is_dir():
        found = sorted(path.glob("*.solution"))
        if len(found) != 1:
            names = ", ".join(p.name for p in found) or "none"
            raise InputFileError(
                f"{path}: expected exactly one *.solution file in the folder, found {names}"
            )
        return found[0]
    if not path.is_file():
        raise InputFileError(f"{path}: no such file or folder")
    return path


def read_label_column(path: Path) -> np.ndarray:
    """The ``label`` column of a CSV file as float64 (one value per row after the header)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise InputFileError(f"{path}: cannot read the file ({err})") from err
    if not lines:
        raise InputFileError(f"{path}: the file is empty; expected a header line 'label'")
    header = [name.strip().strip('"') for name in lines[0].split(",")]
    if "label" not in header:
        raise InputFileError(f"{path}, line 1: no 'label' column in the header {lines[0]!r}")
    column = header.index("label")
    values = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split(",")
        try:
            value = float(fields[column])
        except (IndexError, ValueError):
            raise InputFileError(
                f"{path}, line {number}: expected a number in column 'label', got {line[:60]!r}"
            ) from None
        if not math.isfinite(value):
            raise InputFileError(f"{path}, line {number}: the label must be finite")
        values.append(value)
    return np.array(values, dtype=np.float64)
