"""Builders and Hypothesis strategies of scored submissions for the leaderboard tests."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from proctor.leaderboard import ScoredSubmission
from proctor.spec.leaderboards import BoardSpec
from proctor.types import Direction

START = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
TEAMS = ("owls", "larks", "crows", "=HYPERLINK(1)")
DIRECTIONS: Mapping[str, Direction] = {
    "auc": Direction.HIGHER,
    "dice": Direction.HIGHER,
    "distance": Direction.LOWER,
    "count": Direction.NEUTRAL,
}


def scored(
    submission: str,
    team: str,
    hour: int,
    scores: Mapping[str, Mapping[str, float]],
    *,
    published: Sequence[str] = (),
    final: bool = False,
    cases: Mapping[str, Mapping[str, Sequence[float]]] | None = None,
) -> ScoredSubmission:
    """A submission made ``hour`` hours after START."""
    return ScoredSubmission(
        submission=submission,
        team=team,
        submitted_at=START + timedelta(hours=hour),
        scores=scores,
        case_values=cases or {},
        published=frozenset(published),
        final=final,
    )


def board(**keys: Any) -> BoardSpec:
    """A board declaration named 'b' ranking auc on tasks x and y unless told otherwise."""
    return BoardSpec(**{"name": "b", "tasks": ("x", "y"), "metrics": ("auc",), **keys})


_score = st.one_of(
    st.none(), st.sampled_from([0.1, 0.5, 0.9]), st.floats(0.0, 1.0, allow_nan=False)
)


@st.composite
def submissions(draw: st.DrawFn, tasks: Sequence[str] = ("x", "y")) -> list[ScoredSubmission]:
    """Up to 12 submissions of up to 4 teams with distinct ids, some results missing or tied."""
    count = draw(st.integers(0, 12))
    made = []
    for index in range(count):
        values = {task: draw(_score) for task in tasks}
        made.append(
            scored(
                f"s{index:02d}",
                draw(st.sampled_from(TEAMS)),
                draw(st.integers(0, 5)),  # equal times happen; the id breaks the tie
                {t: {"auc": v} for t, v in values.items() if v is not None},
                published=draw(st.lists(st.sampled_from(list(tasks)), unique=True)),
                final=draw(st.booleans()),
            )
        )
    return made


def isclose_or_both_nan(a: float, b: float) -> bool:
    """Equality for floats where NaN equals NaN."""
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
