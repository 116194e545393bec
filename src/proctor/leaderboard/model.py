"""What a leaderboard reads and what it produces: the stable contract with the service layer.

A board sees each scored submission as a :class:`ScoredSubmission`, built by the service from
stored results (no database type crosses this line)::

    ScoredSubmission(
        submission="s-42", team="owls", submitted_at=datetime(2025, 3, 1, tzinfo=UTC),
        scores={"arousal": {"auprc": 0.41, "auroc": 0.88}},    # task -> metric -> value
        case_values={"arousal": {"dice": [0.9, 0.7, ...]}},     # optional, for the bootstrap
        published=frozenset({"arousal"}),                      # tasks the team published
        final=True,                                            # chosen (or defaulted) as final
    )

``case_values[task][metric]`` are per-case values whose mean is the score (Dice per volume):
the bootstrap resamples them. Leave them out for a metric that is not such a mean (a gross
AUPRC); its interval is then absent. A missing or NaN score is a missing result (it ranks
worst). A naive ``submitted_at`` is taken as UTC.

:func:`proctor.leaderboard.boards.compute_board` returns a :class:`Board`, whose rows are
exported by :mod:`proctor.leaderboard.export` in the ``proctor leaderboard --json`` shape.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

Interval = tuple[float, float]
"""A (low, high) pair: the 2.5th and 97.5th percentiles of a bootstrap distribution."""


class BoardInputError(ValueError):
    """A submission or board handed to the leaderboard cannot be ranked as given."""


@dataclass(frozen=True, slots=True)
class ScoredSubmission:
    """One scored submission as a board sees it (see the module docstring)."""

    submission: str
    team: str
    submitted_at: datetime
    scores: Mapping[str, Mapping[str, float]]
    case_values: Mapping[str, Mapping[str, Sequence[float]]] = field(default_factory=dict)
    published: frozenset[str] = frozenset()
    final: bool = False

    def __post_init__(self) -> None:
        if self.submitted_at.tzinfo is None:
            object.__setattr__(self, "submitted_at", self.submitted_at.replace(tzinfo=UTC))
        for task, metrics in self.scores.items():
            for metric, value in metrics.items():
                if math.isinf(value):
                    raise BoardInputError(
                        f"submission {self.submission!r}: {task}/{metric} is infinite; "
                        "store a finite value or leave the result out (missing)"
                    )

    def score(self, task: str, metric: str) -> float:
        """The value of ``metric`` on ``task``; NaN when missing."""
        return float(self.scores.get(task, {}).get(metric, math.nan))

    def cases(self, task: str, metric: str) -> Sequence[float]:
        """The per-case values of ``metric`` on ``task`` (empty when not stored)."""
        return self.case_values.get(task, {}).get(metric, ())

    @property
    def order_key(self) -> tuple[datetime, str]:
        """Submission time order, the id breaking ties: the earlier one wins a tie."""
        return (self.submitted_at, self.submission)


@dataclass(frozen=True, slots=True)
class RowIntervals:
    """Bootstrap 95% intervals of a row: per task and metric, and of its overall rank.

    ``cases``: task → metric → the number of cases behind that score interval (the row's
    per-case values that are not NaN), one for each interval in ``scores``.
    """

    scores: Mapping[str, Mapping[str, Interval]]
    rank: Interval | None
    cases: Mapping[str, Mapping[str, int]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BoardRow:
    """One line of a board.

    ``rank``: 1 is best, ties share the average rank. ``scores``: task → metric → value for the
    results present (a missing one is absent). ``mean_rank``: the mean over the board's tasks
    of the row's rank on the ranking metric. ``sources``: task → the submission the result
    comes from (differs from ``submission`` only on ``best_published`` and Ladder boards).
    ``ci95``: None when no per-case values were stored (and always on a Ladder board).
    """

    rank: float
    team: str
    submission: str
    submitted_at: datetime
    scores: Mapping[str, Mapping[str, float]]
    mean_rank: float
    ci95: RowIntervals | None = None
    sources: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Board:
    """A computed leaderboard: what was ranked, how, and its rows best first."""

    challenge: str
    phase: str
    name: str
    tasks: tuple[str, ...]
    metrics: tuple[str, ...]
    aggregation: str
    per: str
    public: bool
    ladder_step: float | None
    rows: tuple[BoardRow, ...]
    title: str = ""
