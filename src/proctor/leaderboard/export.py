"""A computed board as JSON (the ``proctor leaderboard --json`` contract) and as CSV.

JSON::

    {"challenge": "physionet2018", "phase": "final", "board": "default", "title": "",
     "tasks": ["arousal"], "metrics": ["auprc"], "aggregation": "mean_rank", "per": "team",
     "public": true, "ladder": null,            # or {"step": 0.01}
     "rows": [{"rank": 1.0, "team": "owls", "submission": "s-42",
               "submitted_at": "2025-03-01T12:00:00+00:00",
               "scores": {"arousal": {"auprc": 0.41}},          # missing results left out
               "ci95": {"scores": {"arousal": {"auprc": [0.35, 0.47]}}, "rank": [1.0, 2.0],
                        "cases": {"arousal": {"auprc": 994}}},
               "mean_rank": 1.0, "sources": {"arousal": "s-42"}}]}

``ci95`` is null when no per-case values were stored (always on a Ladder board); its
``rank`` is null when no row stored per-case values of the ranking metric. ``cases`` gives,
for each interval in ``scores``, the number of cases behind it (the row's per-case values that
are not NaN); a board written before it existed reads back with none.

CSV: one row per board row, columns ``rank, team, submission, submitted_at, mean_rank,
rank_ci95_low, rank_ci95_high``, then per task and metric ``TASK/METRIC``, ``TASK/METRIC
ci95_low``, ``TASK/METRIC ci95_high``, ``TASK/METRIC ci95_n`` (its number of cases), then
``TASK source`` per task (names hold no spaces, so headers are unambiguous). An absent value is
an empty cell; a whole rank is written as an integer (``1``), other numbers exactly (``repr``),
so :func:`rows_from_csv` reads back the same rows. Text cells (team, submission, source) that a
spreadsheet would run as a formula (starting ``= + - @``, a tab or a carriage return) get a
leading ``'``, as does one already starting with ``'``; reading drops it.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from proctor.leaderboard.model import Board, BoardRow, Interval, RowIntervals

FIXED_COLUMNS = (
    "rank",
    "team",
    "submission",
    "submitted_at",
    "mean_rank",
    "rank_ci95_low",
    "rank_ci95_high",
)


def board_to_dict(board: Board) -> dict[str, Any]:
    """The board as a JSON-ready mapping (see the module docstring)."""
    return {
        "challenge": board.challenge,
        "phase": board.phase,
        "board": board.name,
        "title": board.title,
        "tasks": list(board.tasks),
        "metrics": list(board.metrics),
        "aggregation": board.aggregation,
        "per": board.per,
        "public": board.public,
        "ladder": None if board.ladder_step is None else {"step": board.ladder_step},
        "rows": [_row_to_dict(row) for row in board.rows],
    }


def _row_to_dict(row: BoardRow) -> dict[str, Any]:
    ci95 = None
    if row.ci95 is not None:
        ci95 = {
            "scores": {
                task: {metric: list(bounds) for metric, bounds in metrics.items()}
                for task, metrics in row.ci95.scores.items()
            },
            "rank": None if row.ci95.rank is None else list(row.ci95.rank),
            "cases": {task: dict(metrics) for task, metrics in row.ci95.cases.items()},
        }
    return {
        "rank": row.rank,
        "team": row.team,
        "submission": row.submission,
        "submitted_at": row.submitted_at.isoformat(),
        "scores": {task: dict(metrics) for task, metrics in row.scores.items()},
        "ci95": ci95,
        "mean_rank": row.mean_rank,
        "sources": dict(row.sources),
    }


def board_to_json(board: Board, *, indent: int | None = 2) -> str:
    """The board as JSON text (strict JSON: never NaN)."""
    return json.dumps(board_to_dict(board), indent=indent, allow_nan=False)


def board_from_dict(data: Mapping[str, Any]) -> Board:
    """Read back what :func:`board_to_dict` wrote (a client of the API uses this)."""
    ladder = data["ladder"]
    return Board(
        challenge=data["challenge"],
        phase=data["phase"],
        name=data["board"],
        tasks=tuple(data["tasks"]),
        metrics=tuple(data["metrics"]),
        aggregation=data["aggregation"],
        per=data["per"],
        public=bool(data["public"]),
        ladder_step=None if ladder is None else float(ladder["step"]),
        rows=tuple(_row_from_dict(row) for row in data["rows"]),
        title=data.get("title", ""),
    )


def _interval(bounds: Sequence[float]) -> Interval:
    low, high = bounds
    return (float(low), float(high))


def _row_from_dict(data: Mapping[str, Any]) -> BoardRow:
    ci95 = data["ci95"]
    intervals = None
    if ci95 is not None:
        intervals = RowIntervals(
            scores={
                task: {metric: _interval(bounds) for metric, bounds in metrics.items()}
                for task, metrics in ci95["scores"].items()
            },
            rank=None if ci95["rank"] is None else _interval(ci95["rank"]),
            cases={
                task: {metric: int(n) for metric, n in metrics.items()}
                for task, metrics in ci95.get("cases", {}).items()
            },
        )
    return BoardRow(
        rank=float(data["rank"]),
        team=data["team"],
        submission=data["submission"],
        submitted_at=datetime.fromisoformat(data["submitted_at"]),
        scores={
            task: {metric: float(v) for metric, v in metrics.items()}
            for task, metrics in data["scores"].items()
        },
        mean_rank=float(data["mean_rank"]),
        ci95=intervals,
        sources=dict(data["sources"]),
    )


def csv_columns(board: Board) -> list[str]:
    """The CSV header of ``board``."""
    pairs = [f"{task}/{metric}" for task in board.tasks for metric in board.metrics]
    intervals = [f"{pair} {end}" for pair in pairs for end in ("ci95_low", "ci95_high", "ci95_n")]
    sources = [f"{task} source" for task in board.tasks]
    return [*FIXED_COLUMNS, *pairs, *intervals, *sources]


def board_to_csv(board: Board, extra: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """The board's rows as CSV text with a header line.

    ``extra``: more text columns after the board's own, each ``{submission: value}``
    (a submission's public fields); a value is guarded against spreadsheet formulas.
    """
    columns = extra or {}
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[*csv_columns(board), *columns], lineterminator="\n")
    writer.writeheader()
    for row in board.rows:
        cells = _csv_cells(row)
        for name, values in columns.items():
            cells[name] = _text(values.get(row.submission, ""))
        writer.writerow(cells)
    return out.getvalue()


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")


def _text(cell: str) -> str:
    """A text cell a spreadsheet shows as text: a team may not plant a formula in it."""
    return f"'{cell}" if cell.startswith(_FORMULA_STARTS) else cell


def _untext(cell: str) -> str:
    return cell[1:] if cell.startswith("'") else cell


def _number(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def _rank(value: float | None) -> str:
    """A rank as people write it: ``1``, or ``1.5`` for a tie that shares two places."""
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _csv_cells(row: BoardRow) -> dict[str, str]:
    rank_ci = row.ci95.rank if row.ci95 is not None else None
    cells = {
        "rank": _rank(row.rank),
        "team": _text(row.team),
        "submission": _text(row.submission),
        "submitted_at": row.submitted_at.isoformat(),
        "mean_rank": _number(row.mean_rank),
        "rank_ci95_low": _rank(rank_ci[0] if rank_ci else None),
        "rank_ci95_high": _rank(rank_ci[1] if rank_ci else None),
    }
    for task, metrics in row.scores.items():
        for metric, value in metrics.items():
            cells[f"{task}/{metric}"] = _number(value)
    if row.ci95 is not None:
        for task, intervals in row.ci95.scores.items():
            for metric, (low, high) in intervals.items():
                cells[f"{task}/{metric} ci95_low"] = _number(low)
                cells[f"{task}/{metric} ci95_high"] = _number(high)
        for task, counts in row.ci95.cases.items():
            for metric, count in counts.items():
                cells[f"{task}/{metric} ci95_n"] = str(count)
    for task, source in row.sources.items():
        cells[f"{task} source"] = _text(source)
    return cells


def rows_from_csv(text: str) -> tuple[BoardRow, ...]:
    """Read back the rows :func:`board_to_csv` wrote."""
    return tuple(_row_from_cells(cells) for cells in csv.DictReader(io.StringIO(text)))


def _row_from_cells(cells: Mapping[str, str]) -> BoardRow:
    scores: dict[str, dict[str, float]] = {}
    bounds: dict[str, dict[str, Interval]] = {}
    counts: dict[str, dict[str, int]] = {}
    sources: dict[str, str] = {}
    for column, cell in cells.items():
        if column in FIXED_COLUMNS or cell == "":
            continue
        name, _, end = column.partition(" ")
        if end == "source":
            sources[name] = _untext(cell)
            continue
        task, _, metric = name.partition("/")
        if end == "":
            scores.setdefault(task, {})[metric] = float(cell)
        elif end == "ci95_low":
            bounds.setdefault(task, {})[metric] = (float(cell), float(cells[f"{name} ci95_high"]))
        elif end == "ci95_n":
            counts.setdefault(task, {})[metric] = int(cell)
    rank = None
    if cells["rank_ci95_low"]:
        rank = (float(cells["rank_ci95_low"]), float(cells["rank_ci95_high"]))
    return BoardRow(
        rank=float(cells["rank"]),
        team=_untext(cells["team"]),
        submission=_untext(cells["submission"]),
        submitted_at=datetime.fromisoformat(cells["submitted_at"]),
        scores=scores,
        mean_rank=float(cells["mean_rank"]),
        ci95=RowIntervals(bounds, rank, counts) if bounds or rank is not None else None,
        sources=sources,
    )
