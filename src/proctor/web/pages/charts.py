"""Which plots each page shows, from what data (drawn by ``plots``).

Every plot takes only what the page already shows the viewer: the board as the viewer may
read it (``standings.board_for`` / ``board_history``: same reading rules, same disclosure
cut), the team's own submissions as ``submissions.listing`` shows them, a report as
``submissions.status`` disclosed it. So a plot never shows a figure its page would not.
Each chart comes with its text alternative: a caption and the numbers as rows, and with its
legend (every team's full name beside its colour, the viewer's own marked "you"). A board of
several tasks gets one panel per task, then one for the ranking criterion (the mean rank).
Value axes stay inside the metric's declared domain (``MetricDeclaration.domain``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from markupsafe import Markup

from proctor.services.platform.answers import BoardRow as LeaderboardRow
from proctor.services.platform.answers import Leaderboard
from proctor.services.platform.submissions import TeamSubmission
from proctor.services.platform.vocabulary import Board
from proctor.web.pages import plots
from proctor.web.pages.figures import Numbers


@dataclass(frozen=True, slots=True)
class LegendKey:
    """One legend entry: a team's full name, its colour class, and whether it is the viewer's."""

    name: str
    colour: str
    mine: bool


@dataclass(frozen=True, slots=True)
class Chart:
    """A plot, its caption, its legend, and its numbers as a table: the text alternative."""

    key: str
    caption: str
    svg: Markup
    header: tuple[str, ...]
    rows: Sequence[tuple[str, ...]] = field(default_factory=list)
    legend: tuple[LegendKey, ...] = ()


def legend(names: Sequence[str], mine: str | None) -> tuple[LegendKey, ...]:
    """The legend of a chart drawing ``names``: each once, the viewer's marked.

    Sorted by name on every chart, so a team's key sits in the same place on each.
    """
    return tuple(
        LegendKey(name, plots.team_colour(name), name == mine) for name in sorted(set(names))
    )


def domain_of(numbers: Numbers, metric: str) -> plots.Domain:
    """The values ``metric`` can take, as its scorer declares them (any value: undeclared)."""
    challenge = numbers.challenge
    for task in challenge.tasks if challenge is not None else ():
        if metric in task.reported_metrics:
            declared = task.scorer_declaration.metric(metric).domain
            return declared if declared is not None else plots.ANY_VALUE
    return plots.ANY_VALUE


def _rank_column(board: Leaderboard) -> tuple[str, str] | None:
    """(task, metric) the board ranks by: its first metric on its first task with a value."""
    columns = _task_columns(board)
    return columns[0] if columns else None


def _task_columns(board: Leaderboard) -> list[tuple[str, str]]:
    """(task, metric) of the board's first metric on each task that has a value, in order."""
    if not board.metrics:
        return []
    metric = board.metrics[0]
    tasks = [*board.tasks, *(t for row in board.rows for t in row.scores if t not in board.tasks)]
    return [
        (task, metric)
        for task in dict.fromkeys(tasks)
        if any(metric in row.scores.get(task, {}) for row in board.rows)
    ]


def _value(row: LeaderboardRow, task: str, metric: str) -> float | None:
    value = row.scores.get(task, {}).get(metric)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None  # none, or not a number a plot can place (nan, inf)


@dataclass(frozen=True, slots=True)
class _Column:
    """The board column its plots draw: a metric on a task, its name and its wording."""

    task: str
    metric: str
    name: str
    better: str
    numbers: Numbers
    domain: plots.Domain

    def fmt(self, value: float) -> str:
        """``value`` worded with the metric's precision."""
        return self.numbers.fmt(self.metric, value)


def _columns(board: Leaderboard, numbers: Numbers) -> list[_Column]:
    """The columns the board's plots draw: its first metric on each task."""
    several = len(board.tasks) > 1
    return [
        _Column(
            task,
            metric,
            f"{metric} ({task})" if several else metric,
            numbers.better(metric),
            numbers,
            domain_of(numbers, metric),
        )
        for task, metric in _task_columns(board)
    ]


def board_charts(
    board: Leaderboard,
    history: list[tuple[datetime, Board]],
    numbers: Numbers,
    mine: str | None,
) -> list[Chart]:
    """A board's plots: history, distribution and intervals per task, then the mean rank.

    The mean rank (the ranking criterion) gets its own panel when the board has several tasks.
    """
    columns = _columns(board, numbers)
    several = len(columns) > 1
    charts: list[Chart | None] = []
    for column in columns:
        suffix = f"-{column.task}" if several else ""
        charts += [
            _history(history, column, mine, suffix),
            _distribution(board, column, mine, suffix),
            _intervals(board, column, mine, suffix),
        ]
    if several:
        charts.append(_mean_rank(board, mine))
    return [chart for chart in charts if chart is not None and chart.svg]


def _mean_rank(board: Leaderboard, mine: str | None) -> Chart | None:
    """Where each row stands on the board's ranking criterion: its mean rank over the tasks."""
    values = [(row.team, float(row.mean_rank)) for row in board.rows if row.mean_rank is not None]
    if not values:
        return None
    fmt = "{:.2f}".format
    return Chart(
        "mean-rank",
        f"The ranking criterion: each {board.per}'s mean rank over the tasks (lower is better)",
        plots.strip(
            values,
            title="distribution of the mean rank",
            desc=f"{len(values)} mean ranks; {mine or 'your team'} marked",
            fmt=fmt,
            domain=(1.0, float(max(len(board.rows), 2))),
            highlight=mine,
        ),
        ("team", "mean rank"),
        [(team, fmt(v)) for team, v in values],
        legend([team for team, _ in values], mine),
    )


def _distribution(board: Leaderboard, column: _Column, mine: str | None, suffix: str) -> Chart:
    """Where each row of the board stands on the column (the viewer's team marked)."""
    values = [
        (row.team, v)
        for row in board.rows
        if (v := _value(row, column.task, column.metric)) is not None
    ]
    return Chart(
        f"distribution{suffix}",
        f"Where each {board.per} stands: {column.name} ({column.better})",
        plots.strip(
            values,
            title=f"distribution of {column.name}",
            desc=f"{len(values)} scores; {mine or 'your team'} marked",
            fmt=column.fmt,
            domain=column.domain,
            highlight=mine,
        ),
        ("team", column.name),
        [(team, column.fmt(v)) for team, v in values],
        legend([team for team, _ in values], mine),
    )


def _cases(row: LeaderboardRow, task: str, metric: str, numbers: Numbers) -> int | None:
    """The number of cases behind a row's interval of ``metric`` on ``task``.

    The board's own count (``ci95.cases``), else the metric the task's scorer declares as
    its cases (``records``) where the board shows it.
    """
    counted = row.ci95.cases.get(task, {}).get(metric) if row.ci95 else None
    if counted is not None:
        return counted
    cases = row.scores.get(task, {}).get(numbers.cases_metrics().get(task, ""))
    return int(cases) if isinstance(cases, int | float) else None


def _bounded(
    name: str, value: float, bounds: tuple[int | float, int | float], cases: int | None
) -> plots.Bounded:
    return plots.Bounded(name, value, float(bounds[0]), float(bounds[1]), cases)


def _interval_row(bounded: plots.Bounded, fmt: plots.Formatter) -> tuple[str, ...]:
    """An interval's row of its chart's table: value, bounds and its number of cases."""
    cases = "–" if bounded.cases is None else str(bounded.cases)
    return (bounded.name, fmt(bounded.value), fmt(bounded.low), fmt(bounded.high), cases)


def _intervals(board: Leaderboard, column: _Column, mine: str | None, suffix: str) -> Chart | None:
    """Each row's value with its 95% bootstrap interval.

    None when no interval has width: an interval of one point tells nothing.
    """
    task, metric, fmt = column.task, column.metric, column.fmt
    bounded = [
        _bounded(
            row.team, v, row.ci95.scores[task][metric], _cases(row, task, metric, column.numbers)
        )
        for row in board.rows
        if row.ci95
        and metric in row.ci95.scores.get(task, {})
        and (v := _value(row, task, metric)) is not None
    ]
    if not any(b.high > b.low for b in bounded):
        return None
    return Chart(
        f"intervals{suffix}",
        f"{column.name} with its 95% bootstrap interval, per {board.per}",
        plots.intervals(
            bounded,
            title=f"{column.name} intervals",
            desc="value and 95% interval",
            fmt=fmt,
            domain=column.domain,
            highlight=mine,
        ),
        ("team", column.name, "low", "high", "cases"),
        [_interval_row(b, fmt) for b in bounded],
        legend([b.name for b in bounded], mine),
    )


def _history(
    history: list[tuple[datetime, Board]], column: _Column, mine: str | None, suffix: str
) -> Chart:
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
        domain=column.domain,
        highlight=mine,
    )
    return Chart(
        f"history{suffix}",
        f"The board over time: each team's {column.name} ({column.better})",
        svg,
        ("time", "team", column.name),
        rows,
        legend(list(series), mine),
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
        domain=domain_of(numbers, metric),
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
        legend(list(series), None),
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


def _own_cases(
    board: Leaderboard, sid: str, column: tuple[str, str], shown: dict[str, Any], numbers: Numbers
) -> int | None:
    """A submission's number of cases: its report's cases metric, else its row's count."""
    task, metric = column
    cases = shown.get(numbers.cases_metrics().get(task, ""))
    if isinstance(cases, int | float):
        return int(cases)
    own = [_cases(row, task, metric, numbers) for row in board.rows if row.submission == sid]
    return own[0] if own else None


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
    rows: list[plots.Bounded] = []
    for row in board.rows:
        bounds = row.ci95.scores.get(task, {}).get(metric) if row.ci95 else None
        value = _value(row, task, metric)
        if bounds is None or value is None:
            continue
        if row.submission == sid and low is None:
            low, high = bounds
        name = f"{row.team} (#{row.rank:g})"
        rows.append(_bounded(name, value, bounds, _cases(row, task, metric, numbers)))
    value = shown.get(metric)
    if not rows or not isinstance(value, int | float) or low is None or high is None:
        return None
    mine = "this submission"
    count = _own_cases(board, sid, (task, metric), shown, numbers)
    rows.insert(0, plots.Bounded(mine, float(value), float(low), float(high), count))
    if not any(b.high > b.low for b in rows):
        return None

    def fmt(v: float) -> str:
        return numbers.fmt(metric, v)

    return Chart(
        "interval",
        f"This submission's {metric} and its 95% interval beside the board's "
        f"({numbers.better(metric)})",
        plots.intervals(
            rows,
            title=f"{metric} intervals",
            desc="this submission first",
            fmt=fmt,
            domain=domain_of(numbers, metric),
            highlight=mine,
        ),
        ("entry", metric, "low", "high", "cases"),
        [_interval_row(b, fmt) for b in rows],
        legend([b.name for b in rows], mine),
    )
