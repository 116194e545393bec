"""VISCERAL's public board: the best Dice per organ over the published submissions.

A participant chooses, per submission and per organ, what to publish; the board shows for
each organ the maximum of the published mean Dice values (``dice_ORGAN``), with the drill-down
per task (modality). An organ nobody published, or nobody segmented, is left out.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from proctor.scoring.visceral import VISCERAL_ORGANS

Scores = Mapping[str, Mapping[str, Mapping[str, float]]]
"""entry → task → metric → value."""


@dataclass(frozen=True, slots=True)
class OrganBest:
    """One organ's row: the best Dice over every task and the best per task, with the entry."""

    organ: str
    title: str
    dice: float
    entry: str
    task: str
    per_task: dict[str, tuple[float, str]] = field(default_factory=dict)


def _published(entry: str, organ: str, published: Mapping[str, Collection[str]] | None) -> bool:
    return published is None or organ in published.get(entry, ())


def best_dice_per_organ(
    scores: Scores, *, published: Mapping[str, Collection[str]] | None = None
) -> list[OrganBest]:
    """The board, in the organ table's order; ``published`` maps entry → organ keys it shows.

    Without ``published`` every organ of every entry counts (the demo). Ties go to the entry
    named first in ``scores``.
    """
    rows = []
    for organ in VISCERAL_ORGANS:
        per_task: dict[str, tuple[float, str]] = {}
        for entry, tasks in scores.items():
            if not _published(entry, organ.key, published):
                continue
            for task, metrics in tasks.items():
                value = metrics.get(f"dice_{organ.key}", math.nan)
                if not math.isnan(value) and value > per_task.get(task, (-1.0, ""))[0]:
                    per_task[task] = (value, entry)
        if per_task:
            task, (dice, entry) = max(per_task.items(), key=lambda item: item[1][0])
            rows.append(OrganBest(organ.key, organ.title, dice, entry, task, per_task))
    return rows
