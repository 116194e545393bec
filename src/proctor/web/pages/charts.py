"""Which plots each page shows, from what data (drawn by ``plots``).

Every plot takes only what the page already shows the viewer: the board as the viewer may
read it (``standings.board_for`` / ``board_history``: same reading rules, same disclosure
cut), the team's own submissions as ``submissions.listing`` shows them, a report as
``submissions.status`` disclosed it. So a plot never shows a figure its page would not.
Each chart comes with its text alternative: a caption and the numbers as rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from markupsafe import Markup

from proctor.leaderboard import Board
from proctor.services.platform.answers import BoardRow as LeaderboardRow
from proctor.services.platform.answers import Leaderboard
from proctor.services.platform.submissions import TeamSubmission
from proctor.web.pages import plots
from proctor.web.pages.figures import Numbers


@dataclass(frozen=True, slots=True)
class Chart:
    """A plot, its caption, and its numbers as a table (header, rows): the text alternative."""

    key: str
    caption: str
    svg: Markup
    header: tuple[str, ...]
    rows: Sequence[tuple[str, ...]] = field(default_factory=list)


def _rank_column(board: Leaderboard) -> tuple[str, str] | None:
    """(task, metric) the board ranks by: its first metric on its first task with a value."""
    if not board.metrics:
        return None
    metric = board.metrics[0]
    for row in board.rows:
        for task, values in row.scores.items():
            if metric in values:
                return task, metric
    return None


def _value(row: LeaderboardRow, task: str, metric: str) -> float | None:
    value = row.scores.get(task, {}).get(metric)
    return float(value) if isinstance(value, int | float) else None


@dataclass(frozen=True, slots=True)
class _Column:
    """The board column its plots draw: a metric on a task, its name and its wording."""

    task: str
    metric: str
    name: str
    better: str
    numbers: Numbers

    def fmt(self, value: float) -> str:
        """``value`` worded with the metric's precision."""
        return self.numbers.fmt(self.metric, value)


def _column(board: Leaderboard, numbers: Numbers) -> _Column | None:
    """The column the board ranks by (None: no value to draw)."""
    found = _rank_column(board)
    if found is None:
        return None
    task, metric = found
    name = f"{metric} ({task})" if len(board.tasks) > 1 else metric
    return _Column(task, metric, name, numbers.better(metric), numbers)


def board_charts(
    board: Leaderboard,
    history: list[tuple[datetime, Board]],
    numbers: Numbers,
    mine: str | None,
) -> list[Chart]:
    """A board's plots: its history, the distribution of its scores, its intervals."""
    column = _column(board, numbers)
    if column is None:
        return []
    charts = [
        _history(history, column, mine),
        _distribution(board, column, mine),
        _intervals(board, column, mine),
    ]
    return [chart for chart in charts if chart is not None and chart.svg]


def _distribution(board: Leaderboard, column: _Column, mine: str | None) -> Chart:
    """Where each row of the board stands on the column (the viewer's team marked)."""
    values = [
        (row.team, v)
        for row in board.rows
        if (v := _value(row, column.task, column.metric)) is not None
    ]
    return Chart(
        "distribution",
        f"Where each {board.per} stands: {column.name} ({column.better})",
        plots.strip(
            values,
            title=f"distribution of {column.name}",
            desc=f"{len(values)} scores; {mine or 'your team'} marked",
            fmt=column.fmt,
            highlight=mine,
        ),
        ("team", column.name),
        [(team, column.fmt(v)) for team, v in values],
    )


def _intervals(board: Leaderboard, column: _Column, mine: str | None) -> Chart | None:
    """Each row's value with its 95% bootstrap interval (None: the board carries none)."""
    task, metric, fmt = column.task, column.metric, column.fmt
    bounded = [
        (row.team, v, *row.ci95.scores[task][metric])
        for row in board.rows
        if row.ci95
        and metric in row.ci95.scores.get(task, {})
        and (v := _value(row, task, metric)) is not None
    ]
    if not bounded:
        return None
    return Chart(
        "intervals",
        f"{column.name} with its 95% bootstrap interval, per {board.per}",
        plots.intervals(
            bounded,
            title=f"{column.name} intervals",
            desc="value and 95% interval",
            fmt=fmt,
            highlight=mine,
        ),
        ("team", column.name, "low", "high"),
        [(t, fmt(v), fmt(lo), fmt(hi)) for t, v, lo, hi in bounded],
    )


def _history(history: list[tuple[datetime, Board]], column: _Column, mine: str | None) -> Chart:
    """Each team's standing value on the board after each submission (a step line per team)."""
    series: dict[str, list[plots.Point]] = {}
    last: dict[str, float] = {}
    rows = []
    for at, board in history:
        for row in board.rows:
            value = row.scores.get(column.task, {}).get(column.metric)
            if value is None or last.get(row.team) == value:
                continue
            last[row.team] = value
            stamp = at.strftime("%Y-%m-%d %H:%M:%S")
            series.setdefault(row.team, []).append(
                plots.Point(at.timestamp(), value, f"{column.fmt(value)} at {stamp}")
            )
            rows.append((stamp, row.team, column.fmt(value)))
    svg = plots.time_series(
        series,
        title=f"history of {column.name}",
        desc=f"each team's {column.name} on the board over time",
        fmt=column.fmt,
        highlight=mine,
    )
    return Chart(
        "history",
        f"The board over time: each team's {column.name} ({column.better})",
        svg,
        ("time", "team", column.name),
        rows,
    )


def own_submissions_chart(
    listed: list[TeamSubmission], numbers: Numbers, metric: str | None
) -> Chart | None:
    """The team's scored submissions over time, by ``metric`` (None: nothing to draw)."""
    if metric is None:
        return None
    series: dict[str, list[plots.Point]] = {}
    rows = []
    for item in listed:
        for task, values in item.scores.items():
            value = values.get(metric)
            if not isinstance(value, int | float):
                continue
            at = datetime.strptime(item.created, "%Y-%m-%d %H:%M:%S UTC")
            label = f"{item.submission}: {numbers.fmt(metric, value)}"
            key = f"{item.phase} {task}"
            series.setdefault(key, []).append(plots.Point(at.timestamp(), float(value), label))
            rows.append((item.created, item.submission, key, numbers.fmt(metric, value)))
    svg = plots.time_series(
        series,
        title=f"your submissions' {metric}",
        desc=f"{len(rows)} scored submissions over time",
        fmt=lambda v: numbers.fmt(metric, v),
        steps=False,
    )
    if not svg:
        return None
    return Chart(
        "mine",
        f"Your team's submissions over time: {metric} ({numbers.better(metric)})",
        svg,
        ("submitted", "submission", "phase and task", metric),
        rows,
    )


DASHBOARD_STATISTIC = "mean"


def dashboard_charts(report: dict[str, Any] | None, numbers: Numbers) -> list[Chart]:
    """A report's per-part dashboards (VISCERAL: organ × metric) as heat maps, where disclosed."""
    charts = []
    for task, board in ((report or {}).get("dashboard") or {}).items():
        metrics = list(board)
        organs = sorted({organ for rows in board.values() for organ in rows})

        def cell(organ: str, metric: str, board: dict[str, Any] = board) -> float | None:
            value = board.get(metric, {}).get(organ, {}).get(DASHBOARD_STATISTIC)
            return float(value) if isinstance(value, int | float) else None

        def higher(metric: str) -> bool | None:
            direction = numbers.direction(metric) or numbers.family_direction(metric)
            return None if direction is None else direction.higher_is_better

        svg = plots.heat_map(
            organs,
            metrics,
            cell,
            title=f"{task}: {DASHBOARD_STATISTIC} per part and metric",
            desc="darker is better within each metric",
            fmt=numbers.fmt,
            higher_better=higher,
        )
        rows = [(organ, *(numbers.fmt(m, cell(organ, m)) for m in metrics)) for organ in organs]
        charts.append(
            Chart(
                f"dashboard-{task}",
                f"{task}: {DASHBOARD_STATISTIC} per part and metric (darker is better)",
                svg,
                ("part", *metrics),
                rows,
            )
        )
    return charts


def submission_interval_chart(
    board: Leaderboard | None, report: dict[str, Any] | None, sid: str, numbers: Numbers
) -> Chart | None:
    """A submission's 95% interval on the board's metric beside each row's on the board.

    The others' come from the board as the viewer may read it (intervals only where the
    disclosure gives them); this one's from its own disclosed report (``METRIC_ci95_low`` and
    ``_high``) or its row on the board. None when there is nothing to draw.
    """
    if not board or not report:
        return None
    column = _rank_column(board)
    if column is None:
        return None
    task, metric = column
    shown = report.get("scores", {}).get(task, {})
    low, high = shown.get(f"{metric}_ci95_low"), shown.get(f"{metric}_ci95_high")
    rows: list[tuple[str, float, float, float]] = []
    for row in board.rows:
        bounds = row.ci95.scores.get(task, {}).get(metric) if row.ci95 else None
        value = _value(row, task, metric)
        if bounds is None or value is None:
            continue
        if row.submission == sid and low is None:
            low, high = bounds
        rows.append((f"{row.team} (#{row.rank:g})", value, *bounds))
    value = shown.get(metric)
    if not rows or not isinstance(value, int | float) or low is None or high is None:
        return None
    mine = "this submission"
    rows.insert(0, (mine, float(value), float(low), float(high)))

    def fmt(v: float) -> str:
        return numbers.fmt(metric, v)

    return Chart(
        "interval",
        f"This submission's {metric} and its 95% interval beside the board's "
        f"({numbers.better(metric)})",
        plots.intervals(
            rows, title=f"{metric} intervals", desc="this submission first", fmt=fmt, highlight=mine
        ),
        ("entry", metric, "low", "high"),
        [(name, fmt(v), fmt(lo), fmt(hi)) for name, v, lo, hi in rows],
    )
