"""Decimal text fields to float64, each exactly as Python's ``float()`` reads it.

The fields go through ``float()`` in one C-level pass (``map`` into ``numpy.fromiter``); only
when that fails is the column walked to find the first field that is no number. Underscores,
which ``float()`` accepts (``1_000``), are refused as every CSV reader refuses them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def parse_floats(
    fields: Sequence[bytes], *, underscores: bool = True
) -> tuple[FloatArray, int | None]:
    """The values of ``fields`` and the index of the first one that is no number (or None).

    ``underscores=False`` says no field holds ``_`` (the caller searched the file once), which
    skips that check. On a bad field the values are unspecified; the caller reports it.
    """
    try:
        values = np.fromiter(map(float, fields), dtype=np.float64, count=len(fields))
    except ValueError:
        return np.zeros(len(fields)), _first_bad(fields)
    if underscores and any(b"_" in field for field in fields):
        return values, _first_bad(fields)
    return values, None


def _first_bad(fields: Sequence[bytes]) -> int:
    for index, field in enumerate(fields):
        if b"_" in field:
            return index
        try:
            float(field)
        except ValueError:
            return index
    raise AssertionError("no bad field found after float() failed")
