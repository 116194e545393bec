"""Kaggle-style CSV tables: a header line, then one row per id (``id,target`` or ``id,A,B,C``).

:func:`read_table` splits a whole file at once (``bytes.split``: fields stay bytes, so ids
compare exactly as written); a file with quoted fields goes through the ``csv`` module instead.
:func:`match_rows` pairs a prediction's rows with a solution's by id. Every refusal is a
:class:`TableFormatError` naming the file, the line when there is one, and the fix.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from proctor.formats._numbers import parse_floats
from proctor.metrics._validation import MetricInputError
from proctor.wording import plural

FloatArray = npt.NDArray[np.float64]
SHOWN_IDS = 3
"""Ids quoted in a message about missing ones."""


class TableFormatError(MetricInputError):
    """A CSV table cannot be read as one; ``path`` and ``line`` (0: the whole file) say where."""

    def __init__(self, path: Path, line: int, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        where = f"{path}, line {line}" if line else str(path)
        super().__init__(f"{where}: {problem}")


def _text(field: bytes) -> str:
    return field.decode("utf-8", errors="replace")


@dataclass(frozen=True, slots=True)
class CsvTable:
    """A table read from ``path``: its header names and each column's fields, in row order.

    Row ``i`` is on line ``i + 2`` of the file (line 1 is the header).
    """

    path: Path
    header: tuple[str, ...]
    columns: tuple[list[bytes], ...]
    underscores: bool = True

    @property
    def rows(self) -> int:
        """The number of rows below the header."""
        return len(self.columns[0])

    def error(self, row: int | None, problem: str) -> TableFormatError:
        """A refusal about row ``row`` (None: the whole file)."""
        return TableFormatError(self.path, 0 if row is None else row + 2, problem)

    def column(self, name: str, option: str) -> list[bytes]:
        """The fields of column ``name``; ``option`` names the setting that chose it."""
        if name not in self.header:
            raise self.error(
                None,
                f"no column {name!r} in the header ({', '.join(self.header)}): name that "
                f"column {name!r}, or set the {option} option to the column's name",
            )
        return self.columns[self.header.index(name)]

    def floats(self, name: str, fields: Sequence[bytes] | None = None) -> FloatArray:
        """Column ``name`` as finite numbers; a refusal names the first bad line."""
        fields = self.columns[self.header.index(name)] if fields is None else fields
        values, bad = parse_floats(fields, underscores=self.underscores)
        if bad is not None:
            raise self.error(
                bad,
                f"{_text(fields[bad])[:40]!r} in column {name!r} is not a number: "
                "write a number such as 0.25",
            )
        finite = np.isfinite(values)
        if not finite.all():
            row = int(np.argmin(finite))
            raise self.error(
                row, f"{_text(fields[row])!r} in column {name!r}: every value must be finite"
            )
        return values


def read_table(path: Path) -> CsvTable:
    """The CSV table in ``path``; every row must have one field per header name."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise TableFormatError(path, 0, f"cannot read the file ({err.strerror})") from err
    data = data.removeprefix(b"\xef\xbb\xbf")
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    head, _, body = data.partition(b"\n")
    header = header_names(path, head)
    body = body.rstrip(b"\n")
    if not body:
        raise TableFormatError(path, 0, "no rows below the header: write one row per id")
    if b'"' in body:
        columns = _quoted_columns(path, body, len(header))
    else:
        columns = _plain_columns(path, body, len(header))
    return CsvTable(path, header, columns, underscores=b"_" in body)


def header_names(path: Path, head: bytes) -> tuple[str, ...]:
    """The column names of the header line ``head``; refuses no name and a repeated one."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        raise TableFormatError(path, 1, "the header is not UTF-8 text: save as UTF-8") from None
    names = tuple(name.strip() for name in next(csv.reader([text]), []))
    if not any(names):
        raise TableFormatError(path, 1, "no header: the first line names the columns (id,...)")
    for index, name in enumerate(names):
        if name in names[:index]:
            raise TableFormatError(path, 1, f"column {name!r} is named twice: rename one")
    return names


def _field_count_error(path: Path, line: int, found: int, header: int) -> TableFormatError:
    return TableFormatError(
        path,
        line,
        f"{plural(found, 'field')} where the header has {header}: write one value per column, "
        "separated by commas",
    )


def _plain_columns(path: Path, body: bytes, width: int) -> tuple[list[bytes], ...]:
    """Columns of a body without quotes: one split of the whole text, counts checked at once."""
    lines = body.count(b"\n") + 1
    fields = body.replace(b"\n", b",").split(b",")
    if len(fields) != lines * width:
        _raise_bad_line(path, body, width)
    return tuple(fields[column::width] for column in range(width))


def _raise_bad_line(path: Path, body: bytes, width: int) -> None:
    """Find the first line whose field count differs from the header's, and refuse it."""
    for number, line in enumerate(body.split(b"\n"), start=2):
        found = line.count(b",") + 1
        if found != width:
            raise _field_count_error(path, number, found, width)
    raise AssertionError("field counts differ but every line has the header's")


def _quoted_columns(path: Path, body: bytes, width: int) -> tuple[list[bytes], ...]:
    rows = csv.reader(io.StringIO(body.decode("utf-8", errors="replace"), newline=""))
    columns: tuple[list[bytes], ...] = tuple([] for _ in range(width))
    for number, row in enumerate(rows, start=2):
        if len(row) != width:
            raise _field_count_error(path, number, len(row), width)
        for column, field in zip(columns, row, strict=True):
            column.append(field.encode())
    return columns


def match_rows(
    solution: CsvTable, prediction: CsvTable, id_name: str
) -> npt.NDArray[np.int64] | None:
    """For each solution row, the prediction row with its id; None when both are in one order.

    Refuses duplicate ids in either file, a solution id without a prediction row, and a
    prediction id the solution does not have (each naming its file and line).
    """
    truth_ids = solution.column(id_name, "id")
    given_ids = prediction.column(id_name, "id")
    unique = set(truth_ids)
    if len(unique) != len(truth_ids):
        _raise_duplicate(solution, truth_ids)
    if given_ids == truth_ids:
        return None
    index = dict(zip(given_ids, range(len(given_ids)), strict=True))
    if len(index) != len(given_ids):
        _raise_duplicate(prediction, given_ids)
    order = np.fromiter((index.get(key, -1) for key in truth_ids), np.int64, len(truth_ids))
    missing = np.flatnonzero(order < 0)
    if missing.size:
        shown = ", ".join(repr(_text(truth_ids[row])) for row in missing[:SHOWN_IDS])
        more = f" and {missing.size - SHOWN_IDS} more" if missing.size > SHOWN_IDS else ""
        raise prediction.error(
            None,
            f"no row for id {shown}{more}: write one row per id of the test set "
            f"({len(truth_ids)} rows)",
        )
    for row, key in enumerate(given_ids):
        if key not in unique:
            raise prediction.error(
                row, f"id {_text(key)!r} is not an id of the test set: leave that row out"
            )
    return order


def _raise_duplicate(table: CsvTable, ids: list[bytes]) -> None:
    first: dict[bytes, int] = {}
    for row, key in enumerate(ids):
        if key in first:
            raise table.error(
                row, f"id {_text(key)!r} repeats line {first[key] + 2}: give each id one row"
            )
        first[key] = row
    raise AssertionError("a duplicate id was expected")
