"""A bundle's leaderboard columns: metric names, directions, precision, computed columns.

Codabench's ``leaderboards`` and CodaLab's ``leaderboard`` are read into one form (key, title,
sorting, precision, computation) by their format module; this module makes them the plan's
:class:`~.plan.Column` list, the first board's primary column ranking. A column without a
sorting takes its direction from its name (``directions``: ``Difference`` ranks lower first).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from proctor.services.local.bundle_import.directions import unsaid_direction
from proctor.services.local.bundle_import.naming import is_metric_name, metric_name
from proctor.services.local.bundle_import.plan import BundlePlan, Column
from proctor.services.local.bundle_import.reading import BundleRefusedError, text, whole

OPERATIONS = {
    "avg": "avg",
    "average": "avg",
    "mean": "avg",
    "sum": "sum",
    "min": "min",
    "max": "max",
}
DEFAULT_PRECISION = 2
"""Codabench's ``precision`` (CodaLab's ``numeric_format``) of a column that gives none."""


def board_mappings(boards: list[Any], key: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Each board with where it is (``KEY[i]``); a board that is no mapping is refused."""
    for position, board in enumerate(boards):
        if not isinstance(board, dict):
            raise BundleRefusedError("must be a mapping", location=f"{key}[{position}]")
        yield board, f"{key}[{position}]"


def read_columns(
    plan: BundlePlan,
    boards: list[dict[str, Any]],
    found_by_board: list[list[tuple[dict[str, Any], str]]],
    key: str,
) -> None:
    """The boards' columns (Codabench form: key, title, sorting, precision, computation...).

    ``found_by_board``: each board's columns with where each is, as the format reads them
    (each board of :func:`board_mappings` read by the format).

    A key that is no metric name (``err-new``, ``NER accuracy``) becomes one (``err_new``),
    its scorer reading it under the key (``score_keys``), as Codabench stores any key.
    """
    names = _metric_names([column for found in found_by_board for column, _ in found])
    for position, (board, found) in enumerate(zip(boards, found_by_board, strict=True)):
        if position == 0:
            plan.board_title = str(board.get("title") or "Results")
        elif board.get("columns"):
            plan.warnings.append(
                f"{key}[{position}]: its columns join the first board's (one board per phase)"
            )
        _read_board(plan, board, found, names, first=position == 0)
    if not plan.columns:
        raise BundleRefusedError("no leaderboard column names a score key", location=key)
    if not plan.primary:
        plan.primary = plan.columns[0].key


def _read_board(
    plan: BundlePlan,
    board: dict[str, Any],
    found: list[tuple[dict[str, Any], str]],
    names: dict[str, str],
    first: bool,
) -> None:
    """One board's columns into the plan (the first board's primary column ranks)."""
    by_index = {whole(col.get("index", i), f"{w}.index"): col for i, (col, w) in enumerate(found)}
    for column, where in found:
        plan.columns.append(_column(column, where, by_index, names, plan.warnings))
        if plan.columns[-1].label:
            plan.warnings.append(
                f"{where}.key: {plan.columns[-1].label!r} is no metric name: metric "
                f"{plan.columns[-1].key!r}, read from the scores under its key"
            )
    if first and found:
        primary = whole(board.get("primary_index", 0) or 0, "leaderboards[0].primary_index")
        chosen = by_index.get(primary, found[0][0])
        plan.primary = names.get(str(chosen.get("key")), "")


def _metric_names(columns: list[dict[str, Any]]) -> dict[str, str]:
    """``{column key: metric name}``: a key that is no metric name gets one, unique."""
    keys = [str(column.get("key") or "") for column in columns]
    taken = {key for key in keys if is_metric_name(key)}
    names: dict[str, str] = {}
    for key in keys:
        if not key.strip():
            continue
        names.setdefault(key, key if is_metric_name(key) else metric_name(key, taken))
    return names


def _column(
    column: dict[str, Any],
    where: str,
    by_index: dict[int, dict[str, Any]],
    names: dict[str, str],
    warnings: list[str],
) -> Column:
    key = text(column.get("key"), f"{where}.key")
    if key not in names:
        raise BundleRefusedError("a column needs a score key", location=f"{where}.key")
    sorting = (text(column.get("sorting"), f"{where}.sorting") or "").lower()
    if sorting not in ("desc", "asc", ""):
        raise BundleRefusedError(f"{sorting!r}: use desc or asc", location=f"{where}.sorting")
    title = text(column.get("title"), f"{where}.title") or key
    direction = (
        ("higher" if sorting == "desc" else "lower")
        if sorting
        else unsaid_direction((key, title), where, str(column.get("said") or "sorting"), warnings)
    )
    computation = None
    operation = column.get("computation")
    if operation:
        mapped = OPERATIONS.get(text(operation, f"{where}.computation").lower())
        if mapped is None:
            raise BundleRefusedError(
                f"{operation!r} is not a computation Proctor makes (avg, sum, min, max)",
                location=f"{where}.computation",
            )
        sources = column.get("computation_keys") or [
            by_index[index].get("key")
            for index in _indexes(column.get("computation_indexes"), f"{where}.computation_indexes")
            if index in by_index
        ]
        if not sources:
            raise BundleRefusedError(
                "names no column to compute from", location=f"{where}.computation"
            )
        computation = (mapped, tuple(names.get(str(source), str(source)) for source in sources))
    precision = column.get("precision")
    return Column(
        key=names[key],
        label=key if names[key] != key else "",
        title=title,
        direction=direction,
        precision=(
            whole(precision, f"{where}.precision")
            if precision not in (None, "")
            else DEFAULT_PRECISION
        ),
        hidden=bool(column.get("hidden")),
        computation=computation,
    )


def _indexes(value: Any, location: str) -> list[int]:
    """A list of column indexes, each a whole number (none: empty)."""
    if value in (None, ""):
        return []
    if not isinstance(value, list):
        raise BundleRefusedError("must be a list of column indexes", location=location)
    return [whole(index, location) for index in value]
