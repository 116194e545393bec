"""The fast path of CSV tables: ``pyarrow.csv`` reads a clean pair of files, ids matched in C.

:func:`read_matched` gives a solution and a prediction with rows paired by id, or None as soon
as anything is unusual: pyarrow not installed, quotes, a lone carriage return, a bad header, a
row whose field count differs, an empty line, a repeated, missing or unknown id. Then the
careful reader (:mod:`proctor.formats.table_csv`) reads the files again and names the file,
the line and the fix; the fast path never refuses anything itself.

Fields are read as bytes (as the careful reader keeps them), so ids compare exactly as written.
A number column is converted by Arrow's correctly rounded parser, which gives the same double
as Python's ``float()`` on every text both accept (``tests/formats/test_formats_table_arrow.py``); a
text Arrow does not read (spaces around a number, ``1_000``, ``nan``) sends the file to the
careful reader, which decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from proctor.formats.table_csv import TableFormatError, header_names

try:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pa_csv
except ImportError:  # pragma: no cover - pyarrow is a dependency; the careful reader still works
    pa = None

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class ArrowTable:
    """One file read by Arrow: its header names and a table of binary columns."""

    path: Path
    header: tuple[str, ...]
    table: Any

    def column(self, name: str, order: Any = None) -> Any | None:
        """Column ``name`` (rows taken in ``order`` when given), or None when absent."""
        if name not in self.header:
            return None
        column = self.table.column(self.header.index(name)).combine_chunks()
        return column if order is None else column.take(order)

    def floats(self, name: str, order: Any = None) -> FloatArray | None:
        """Column ``name`` as finite numbers, or None when any field is not one."""
        column = self.column(name, order)
        if column is None:
            return None
        try:
            values = np.asarray(pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        return values if bool(np.isfinite(values).all()) else None

    def codes(self, name: str, order: Any = None) -> tuple[list[bytes], IntArray] | None:
        """Column ``name`` as its distinct fields and each row's index among them."""
        column = self.column(name, order)
        if column is None:
            return None
        encoded = pc.dictionary_encode(column)
        distinct: list[bytes] = encoded.dictionary.to_pylist()
        return distinct, np.asarray(encoded.indices.to_numpy(), dtype=np.int64)


@dataclass(frozen=True, slots=True)
class MatchedTables:
    """A solution and a prediction read by Arrow, their rows paired by id.

    ``order`` takes the prediction's rows in the solution's order (None: one order already).
    """

    truth: ArrowTable
    given: ArrowTable
    order: Any
    rows: int


def read_clean(path: Path) -> ArrowTable | None:
    """``path`` read by Arrow, or None when pyarrow is missing or the file is anything but clean.

    The header line is split by the careful reader's :func:`header_names`, so both agree.
    """
    if pa is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b'"' in data or (b"\r" in data and data.count(b"\r") != data.count(b"\r\n")):
        return None
    if data.endswith((b"\n\n", b"\n\r\n")):
        return None  # blank lines at the end: the careful reader drops them
    end = data.find(b"\n")
    head = data[: len(data) if end < 0 else end].removeprefix(BOM).removesuffix(b"\r")
    try:
        header = header_names(path, head)
    except TableFormatError:
        return None
    binary = {name: pa.binary() for name in header}
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(data),
            read_options=pa_csv.ReadOptions(column_names=list(header), skip_rows=1),
            parse_options=pa_csv.ParseOptions(ignore_empty_lines=False, newlines_in_values=False),
            convert_options=pa_csv.ConvertOptions(
                column_types=binary, null_values=[], strings_can_be_null=False
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows == 0:
        return None
    return ArrowTable(path, header, table)


def read_matched(solution: Path, prediction: Path, id_name: str) -> MatchedTables | None:
    """Both files read by Arrow with rows paired by id, or None (the careful reader decides)."""
    truth = read_clean(solution)
    given = read_clean(prediction) if truth is not None else None
    if truth is None or given is None:
        return None
    truth_ids, given_ids = truth.column(id_name), given.column(id_name)
    if truth_ids is None or given_ids is None or not _distinct(truth_ids):
        return None
    rows = len(truth_ids)
    if given_ids.equals(truth_ids):
        return MatchedTables(truth, given, None, rows)
    if len(given_ids) != rows:
        return None
    order = pc.index_in(truth_ids, value_set=given_ids)
    if order.null_count:
        return None
    return MatchedTables(truth, given, order, rows)


def _distinct(ids: Any) -> bool:
    """Whether no id repeats: at once when the ids are in increasing order, else by hashing."""
    if len(ids) < 2:
        return True
    rising = pc.all(pc.greater(ids.slice(1), ids.slice(0, len(ids) - 1))).as_py()
    return bool(rising) or pc.count_distinct(ids).as_py() == len(ids)
