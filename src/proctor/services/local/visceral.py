"""Use cases of the VISCERAL Anatomy3 challenge: the private dashboard and the organ board."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from proctor.leaderboard.organs import OrganBest, best_dice_per_organ
from proctor.pipeline.report import EvaluationReport
from proctor.types import RunStatus

__all__ = ["DashboardRow", "OrganBest", "dashboard_rows", "organ_board"]


@dataclass(frozen=True, slots=True)
class DashboardRow:
    """One line of the private dashboard: a metric of an organ on a task (modality).

    ``empty``: volumes with no (or an empty) mask; ``count``: volumes evaluated; the rest are
    statistics over those (NaN when none was evaluated).
    """

    task: str
    metric: str
    organ: str
    empty: int
    count: int
    minimum: float
    maximum: float
    median: float
    mean: float


def dashboard_rows(report: EvaluationReport) -> list[DashboardRow]:
    """The dashboard of every task of ``report`` (empty for challenges without one).

    Per metric and organ: empty, count, minimum, maximum, median and mean, as VISCERAL showed
    each participant privately; the platform stores these rows with the submission.
    """
    rows = []
    for task, board in report.dashboard.items():
        for metric, organs in board.items():
            for organ, stats in organs.items():
                rows.append(
                    DashboardRow(
                        task,
                        metric,
                        organ,
                        int(stats["empty"]),
                        int(stats["count"]),
                        stats["min"],
                        stats["max"],
                        stats["median"],
                        stats["mean"],
                    )
                )
    return rows


def organ_board(
    reports: Sequence[tuple[str, EvaluationReport]],
    *,
    published: Mapping[str, Collection[str]] | None = None,
) -> list[OrganBest]:
    """The public board: the best published Dice per organ over the scored submissions."""
    scores = {
        label: report.scores for label, report in reports if report.status is RunStatus.SCORED
    }
    return best_dice_per_organ(scores, published=published)
