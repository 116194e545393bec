"""The Ladder (Blum & Hardt, ICML 2015): a provisional board that stops rewarding resubmission.

A provisional board scores entries on a public split that every submission probes again. A
team that resubmits small variations and keeps whatever scores higher overfits that split: the
board rewards the noise, not the method. The Ladder shows, per team, a score that changes only
when a submission beats the shown one by more than ``step``, and then shows it rounded to a
multiple of ``step``. Gains within the noise of the split no longer move the board, and each
shown value reveals little about the split, so adaptive resubmission stops paying.

Rules (per team and task, on the board's one metric, in submission time order):

* the first present result is shown rounded to the nearest multiple of ``step``;
* a later result replaces it only when it is better by more than ``step`` (higher: above
  ``shown + step``; lower: below ``shown - step``), again rounded; so a shown value only ever
  improves, by at least one step;
* a missing (NaN) result never moves it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from proctor.leaderboard.model import ScoredSubmission
from proctor.leaderboard.selection import Candidate


def climb(values: Sequence[float], *, step: float, higher: bool) -> list[tuple[float, int]]:
    """The shown value after each result, and the index of the result that set it.

    Before the first present result the pair is ``(nan, -1)``.

    >>> climb([0.50, 0.505, 0.53], step=0.01, higher=True)
    [(0.5, 0), (0.5, 0), (0.53, 2)]
    """
    if not step > 0 or math.isinf(step):
        raise ValueError(f"the Ladder's step must be a positive finite number, got {step}")
    units: int | None = None
    source = -1
    shown: list[tuple[float, int]] = []
    for index, value in enumerate(values):
        if not math.isnan(value) and (units is None or _beats(value, units, step, higher)):
            units, source = math.floor(value / step + 0.5), index
        shown.append((math.nan, -1) if units is None else (_value(units, step), source))
    return shown


def _beats(value: float, units: int, step: float, higher: bool) -> bool:
    """True when ``value`` is better than ``units`` steps by more than one step."""
    return value > (units + 1) * step if higher else value < (units - 1) * step


def _value(units: int, step: float) -> float:
    """``units`` multiples of ``step``, rounded so 0.1 * 3 prints as 0.3."""
    digits = max(0, -math.floor(math.log10(step))) + 3
    return round(units * step, digits)


def laddered(
    submissions: Sequence[ScoredSubmission],
    tasks: Sequence[str],
    metric: str,
    *,
    step: float,
    higher: bool,
) -> list[Candidate]:
    """One candidate per team showing its Ladder values (``submissions`` in time order).

    Each task's source is the submission that last moved its value; the row shows the most
    recent of those (the team's latest submission when none has a result yet).
    """
    by_team: dict[str, list[ScoredSubmission]] = defaultdict(list)
    for submission in submissions:
        by_team[submission.team].append(submission)
    return [_team_ladder(own, tasks, metric, step=step, higher=higher) for own in by_team.values()]


def _team_ladder(
    own: Sequence[ScoredSubmission], tasks: Sequence[str], metric: str, *, step: float, higher: bool
) -> Candidate:
    """The Ladder over one team's submissions (in time order), task by task."""
    sources: dict[str, ScoredSubmission] = {}
    shown: dict[str, float] = {}
    for task in tasks:
        value, index = climb([s.score(task, metric) for s in own], step=step, higher=higher)[-1]
        if index >= 0:
            sources[task], shown[task] = own[index], value
    latest = max(sources.values(), key=lambda s: s.order_key) if sources else own[-1]
    return Candidate(own[0].team, latest, sources, shown)
