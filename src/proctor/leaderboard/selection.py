"""Which results a board ranks: the candidates (future rows) and where each result comes from.

A candidate is a team's row-to-be: the submission it is shown as and, per task, the submission
its result comes from. On most boards one submission provides every task; ``best_published``
takes each task from the team's best published result on it (VISCERAL), and the Ladder shows
a value rounded to its step instead of the submission's own.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from proctor.leaderboard.model import ScoredSubmission


@dataclass(frozen=True, slots=True)
class Candidate:
    """A future row: its team, the submission it shows, and each task's source submission.

    ``shown`` overrides the ranking metric's value per task (the Ladder's rounded value).
    """

    team: str
    submission: ScoredSubmission
    sources: Mapping[str, ScoredSubmission]
    shown: Mapping[str, float] = field(default_factory=dict)

    def value(self, task: str, metric: str, rank_metric: str) -> float:
        """The value this row shows for ``metric`` on ``task`` (NaN when missing)."""
        if metric == rank_metric and task in self.shown:
            return self.shown[task]
        source = self.sources.get(task)
        return math.nan if source is None else source.score(task, metric)


def eligible(
    submissions: Iterable[ScoredSubmission], *, only_final: bool
) -> list[ScoredSubmission]:
    """The submissions a board considers, in submission time order."""
    chosen = [s for s in submissions if s.final or not only_final]
    return sorted(chosen, key=lambda s: s.order_key)


def each_submission(
    submissions: Sequence[ScoredSubmission], tasks: Sequence[str]
) -> list[Candidate]:
    """One candidate per submission, every task's result its own."""
    return [Candidate(s.team, s, {task: s for task in tasks}) for s in submissions]


def published_each(
    submissions: Sequence[ScoredSubmission], tasks: Sequence[str]
) -> list[Candidate]:
    """One candidate per submission that published a board task, with only those tasks."""
    rows = []
    for submission in submissions:
        sources = {task: submission for task in tasks if task in submission.published}
        if sources:
            rows.append(Candidate(submission.team, submission, sources))
    return rows


def best_published(
    submissions: Sequence[ScoredSubmission], tasks: Sequence[str], metric: str, *, higher: bool
) -> list[Candidate]:
    """Per team, per task, the best published result on ``metric`` (the earliest on a tie).

    A team that published none of the board's tasks has no row. The row shows the most recent
    of the submissions it draws on.
    """
    by_team: dict[str, dict[str, ScoredSubmission]] = defaultdict(dict)
    for task in tasks:
        for submission in submissions:  # time order: a later equal result does not replace
            if task not in submission.published:
                continue
            value = submission.score(task, metric)
            held = by_team[submission.team].get(task)
            if held is None or _beats(value, held.score(task, metric), higher=higher):
                by_team[submission.team][task] = submission
    return [
        Candidate(team, max(sources.values(), key=lambda s: s.order_key), sources)
        for team, sources in by_team.items()
    ]


def _beats(value: float, held: float, *, higher: bool) -> bool:
    """True when ``value`` is strictly better than ``held`` (a present value beats a NaN)."""
    if math.isnan(value):
        return False
    if math.isnan(held):
        return True
    return value > held if higher else value < held


def best_per_team(candidates: Sequence[Candidate], mean_ranks: Sequence[float]) -> list[Candidate]:
    """Each team's candidate with the lowest mean rank; on a tie, the earliest submission."""
    best: dict[str, tuple[float, Candidate]] = {}
    for candidate, mean in zip(candidates, mean_ranks, strict=True):
        held = best.get(candidate.team)
        key = (mean, candidate.submission.order_key)
        if held is None or key < (held[0], held[1].submission.order_key):
            best[candidate.team] = (mean, candidate)
    return [candidate for _, candidate in best.values()]
