"""The board's plots as SVG (``proctor.web.pages.charts``): a panel per task and one for the
mean rank, a team's one colour on every chart, axes inside the metric's domain, intervals only
where they have width."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from proctor.scoring.autowsl import SCORER as AUTOWSL_SCORER
from proctor.services.platform.answers import BoardRow, Interval, Leaderboard
from proctor.spec.scorer import ScorerDeclaration
from proctor.web.pages import plots
from proctor.web.pages.charts import board_charts
from proctor.web.pages.figures import Numbers

TASKS = ("liver", "lung", "kidney")
AUC = {"amber": (0.98, 0.91, 0.95), "blue": (0.97, 0.93, 0.94), "cyan": (0.90, 0.99, 0.96)}


def row(team: str, rank: int, *, width: float) -> BoardRow:
    """A row of the three-task board: its AUC on each task, intervals ``width`` wide."""
    scores = {task: {"auc": auc} for task, auc in zip(TASKS, AUC[team], strict=True)}
    bounds = {t: {"auc": (v["auc"] - width, min(1.0, v["auc"] + width))} for t, v in scores.items()}
    return BoardRow(
        rank=rank, team=team, submission=f"s-{team}", submitted_at="2026-01-01 00:00:00 UTC",
        scores=cast(Any, scores), mean_rank=rank + 0.5,
        ci95=Interval(scores=bounds, rank=None, cases={t: {"auc": 30 + rank} for t in TASKS}),
        sources={},
    )  # fmt: skip


def board(width: float = 0.02) -> Leaderboard:
    """A board of three tasks ranked by mean rank."""
    return Leaderboard(
        challenge="organs", phase="final", board="default", title="", tasks=list(TASKS),
        metrics=["auc"], aggregation="mean_rank", per="team", public=True, ladder=None,
        rows=[row(team, n + 1, width=width) for n, team in enumerate(AUC)],
    )  # fmt: skip


@dataclass
class Past:
    """A past board as ``board_history`` gives it (its rows are all the chart reads)."""

    rows: list[BoardRow]


def history() -> list[tuple[datetime, Any]]:
    """The board after each of three submissions, a minute apart."""
    rows = board().rows
    return [(datetime(2026, 1, 1, 0, n, tzinfo=UTC), Past(rows[: n + 1])) for n in range(len(rows))]


def test_a_three_task_board_gets_a_panel_per_task_and_its_mean_rank() -> None:
    charts = board_charts(board(), history(), Numbers(None), "amber")
    keys = [chart.key for chart in charts]
    for task in TASKS:
        assert {f"history-{task}", f"distribution-{task}", f"intervals-{task}"} <= set(keys)
    assert keys[-1] == "mean-rank"
    assert "lower is better" in charts[-1].caption


def test_a_team_keeps_its_colour_on_every_chart_and_is_outlined_when_it_is_you() -> None:
    charts = board_charts(board(), history(), Numbers(None), "amber")
    for team in AUC:
        colours = {
            found
            for chart in charts
            for found in re.findall(
                rf'class="plot-dot (plot-c\d)[^"]*"[^>]*><title>{team}:', chart.svg
            )
        }
        assert colours == {plots.team_colour(team)}, team
    assert all("plot-mine" in chart.svg for chart in charts)
    legends = {key.name: key for chart in charts for key in chart.legend}
    assert legends["amber"].mine and not legends["blue"].mine
    assert legends["cyan"].colour == plots.team_colour("cyan")
    orders = {tuple(key.name for key in chart.legend) for chart in charts if chart.legend}
    assert orders == {("amber", "blue", "cyan")}  # a team's key in one place on every chart


@dataclass
class Task:
    """A task of a challenge scored by AutoWSL's scorer (its AUC declares [0, 1])."""

    name: str = "final-pu"
    reported_metrics: tuple[str, ...] = ("auc",)
    scorer_declaration: ScorerDeclaration = AUTOWSL_SCORER.declaration


@dataclass
class Declared:
    """The part of a challenge ``Numbers`` reads for a metric's domain."""

    tasks: tuple[Task, ...] = (Task(),)

    def digits(self, metric: str) -> int | None:
        """Three digits after the point for every metric."""
        return 3


def test_an_auc_axis_never_passes_one() -> None:
    numbers = Numbers(cast(Any, Declared()))
    charts = board_charts(board(), history(), numbers, None)
    for chart in charts:
        labels = [float(t) for t in re.findall(r'class="plot-tick"[^>]*>(-?[\d.]+)<', chart.svg)]
        assert labels, chart.key
        if chart.key != "mean-rank":
            assert max(labels) <= 1.0, (chart.key, labels)
    alone = board_charts(board().model_copy(update={"rows": board().rows[:1]}), [], numbers, None)
    assert 'x2="624"' in alone[0].svg  # the axis ends at 1.00, the plot's right edge
    assert re.findall(r'class="plot-tick"[^>]*>([\d.]+)<', alone[0].svg)[-1] == "1.00"


def test_every_interval_has_its_number_of_cases_beside_it() -> None:
    charts = board_charts(board(), [], Numbers(None), None)
    drawn = [chart for chart in charts if chart.key.startswith("intervals")]
    assert [chart.key for chart in drawn] == [f"intervals-{task}" for task in TASKS]
    for chart in drawn:
        assert re.findall(r">n=(\d+)</text>", chart.svg) == ["31", "32", "33"], chart.key
        assert chart.header[-1] == "cases"  # and in its table, the text alternative
        assert [r[-1] for r in chart.rows] == ["31", "32", "33"], chart.key


def test_intervals_without_width_are_not_drawn() -> None:
    keys = [chart.key for chart in board_charts(board(width=0.0), [], Numbers(None), None)]
    assert not [key for key in keys if key.startswith("intervals")]
