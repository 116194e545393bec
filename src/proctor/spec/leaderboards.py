"""The ``leaderboards:`` list of a phase: which boards it shows and how each ranks entries.

A board is a declaration, computed by :mod:`proctor.leaderboard` from the phase's scored
submissions::

    leaderboards:
      - name: provisional            # [A-Za-z0-9][A-Za-z0-9_.-]*; not "default" nor "all"
        title: "Provisional (10% of the test set)"   # optional, for display
        tasks: [subset]              # a subset of the phase's tasks (default: all of them)
        metrics: [auprc, auroc]      # the first ranks; the others are shown beside it
        aggregation: mean_rank       # mean_rank | best_published | metric
        per: team                    # team (its best submission) | submission (every one)
        only_final: false            # only the submissions chosen (or defaulted) as final
        public: true                 # readable without a token
        ladder: {step: 0.01}         # optional: the Ladder (Blum & Hardt, ICML 2015)

Aggregations: ``mean_rank`` ranks every task on the first metric (ties share the average rank,
a missing result ranks worst) and orders by the mean of those ranks (AutoWSL, ChaLearn
AutoML); ``best_published`` takes, per task, a team's best result among the submissions whose
task it published and orders by the mean rank of those (VISCERAL); ``metric`` orders by one
task's metric (the board must name exactly one task).

Every phase also has two implicit boards: ``default`` (the best submission per team) and
``all`` (every submission), both ranked by mean rank on the challenge's ``leaderboard.metric``
(else the first rankable metric every task of the phase reports); ``all`` is not public, and
neither is ``default`` in a phase that declares a Ladder or a ``best_published`` board (its
exact, unpublished results would undo them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from proctor.spec.protocols import LocatedError, Strict
from proctor.spec.scorer import ScorerDeclaration
from proctor.types import Direction
from proctor.wording import noun

if TYPE_CHECKING:
    from proctor.spec.model import Challenge, Phase

BoardName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
Aggregation = Literal["mean_rank", "best_published", "metric"]
Per = Literal["team", "submission"]

DEFAULT_BOARD = "default"
"""The implicit board of every phase: each team's best submission."""
ALL_BOARD = "all"
"""The implicit board of every phase: every scored submission."""
IMPLICIT_BOARDS = (DEFAULT_BOARD, ALL_BOARD)


class LadderSpec(Strict):
    """The Ladder: a team's shown score moves only when beaten by more than ``step``.

    Processed in submission time order; the shown value is then rounded to a multiple of
    ``step``. Resubmitting small variations against a provisional (public) split stops paying:
    a gain within the noise of that split no longer moves the board.
    """

    step: float = Field(gt=0, allow_inf_nan=False, strict=True)


class BoardSpec(Strict):
    """One leaderboard of a phase (see the module docstring for every key)."""

    name: BoardName
    title: str = ""
    tasks: tuple[str, ...] = ()
    metrics: tuple[str, ...] = Field(min_length=1)
    aggregation: Aggregation = "mean_rank"
    per: Per = "team"
    only_final: bool = False
    public: bool = True
    ladder: LadderSpec | None = None

    @model_validator(mode="after")
    def _keys_agree(self) -> BoardSpec:
        raise_all(list(_own_problems(self)), "")
        return self

    @property
    def rank_metric(self) -> str:
        """The metric that orders the board (the first listed)."""
        return self.metrics[0]


def raise_all(problems: Sequence[tuple[str, str]], where: str) -> None:
    """Raise one ``LocatedError`` naming every (location, message) problem; none: return.

    One problem keeps its own location; several are listed in the message under ``where``.
    """
    if len(problems) == 1:
        raise LocatedError(problems[0][1], problems[0][0])
    if problems:
        listing = "\n".join(f"  - {location}: {message}" for location, message in problems)
        raise LocatedError(f"{len(problems)} problems:\n{listing}", where)


def _own_problems(board: BoardSpec) -> Iterator[tuple[str, str]]:
    """Contradictions inside one board declaration: (location in the board, message)."""
    for key, names in (("tasks", board.tasks), ("metrics", board.metrics)):
        for index, name in enumerate(names):
            if name in names[:index]:
                yield f"{key}[{index}]", f"{name!r} is listed twice: keep it once"
    if board.ladder is None:
        return
    if board.per != "team":
        yield "per", "the Ladder keeps one shown score per team: set per: team"
    if board.aggregation == "best_published":
        yield "aggregation", "the Ladder applies to mean_rank or metric boards, not best_published"
    if len(board.metrics) > 1:
        yield (
            "metrics",
            (
                "a Ladder board shows only its ranking metric (another metric at full precision "
                "would undo the Ladder): list one metric"
            ),
        )


def implicit_boards(
    metric: str, tasks: Sequence[str], *, public: bool = True
) -> tuple[BoardSpec, BoardSpec]:
    """The ``default`` (best per team; ``public``) and ``all`` (every submission) boards."""
    return (
        BoardSpec(name=DEFAULT_BOARD, tasks=tuple(tasks), metrics=(metric,), public=public),
        BoardSpec(
            name=ALL_BOARD, tasks=tuple(tasks), metrics=(metric,), per="submission", public=False
        ),
    )


def default_metric(challenge: Challenge, phase: Phase) -> str | None:
    """The metric of the implicit boards: ``leaderboard.metric``, else one every task ranks."""
    if challenge.leaderboard is not None:
        return challenge.leaderboard.metric
    scorers = [challenge.task(name).scorer_declaration for name in phase.tasks]
    if not scorers:
        return None
    for metric in scorers[0].metrics:
        if metric.rankable and all(metric.name in s.metric_names for s in scorers):
            return metric.name
    return None


def phase_boards(challenge: Challenge, phase: str | None) -> tuple[BoardSpec, ...]:
    """Every board of ``phase`` (the last when None): the implicit two, then the declared ones.

    Each returned board names its tasks (a declaration without ``tasks`` gets the phase's).
    """
    found = challenge.phase(phase)
    metric = default_metric(challenge, found)
    implicit: tuple[BoardSpec, ...] = ()
    if metric is not None:
        implicit = implicit_boards(metric, found.tasks, public=not _guarded(found.leaderboards))
    declared = tuple(
        board if board.tasks else board.model_copy(update={"tasks": found.tasks})
        for board in found.leaderboards
    )
    return (*implicit, *declared)


def _guarded(boards: Sequence[BoardSpec]) -> bool:
    """True when a board of the phase deliberately shows less than every exact result.

    A Ladder board (exact scores beside it would undo the rounding) or a best_published one
    (results stay private until published): the implicit ``default`` is then not public.
    """
    return any(b.ladder is not None or b.aggregation == "best_published" for b in boards)


def find_board(challenge: Challenge, phase: str | None, name: str) -> BoardSpec:
    """The board ``name`` of ``phase``; ``KeyError`` listing the boards there when unknown."""
    boards = phase_boards(challenge, phase)
    for board in boards:
        if board.name == name:
            return board
    known = ", ".join(board.name for board in boards)
    raise KeyError(f"no board {name!r} in phase {challenge.phase(phase).name!r} (boards: {known})")


def metric_directions(challenge: Challenge) -> dict[str, Direction]:
    """Metric name → which way it improves, over every task's scorer (for ranking a board)."""
    return {
        metric.name: metric.direction
        for task in challenge.tasks
        for metric in task.scorer_declaration.metrics
    }


def check_boards(challenge: Challenge) -> None:
    """Raise one error naming every problem of the phases' boards (with their YAML paths)."""
    problems = [
        (f"phases[{index}].{location}", message)
        for index, phase in enumerate(challenge.phases)
        for location, message in _phase_problems(challenge, phase)
    ]
    raise_all(problems, "phases")


def _phase_problems(challenge: Challenge, phase: Phase) -> Iterator[tuple[str, str]]:
    """(location under the phase, message) of every problem of one phase's boards."""
    if phase.tasks and _known(challenge, phase) and default_metric(challenge, phase) is None:
        yield (
            "tasks",
            (
                "its tasks share no rankable metric for the implicit boards: "
                "declare leaderboard.metric"
            ),
        )
    known = {task.name for task in challenge.tasks}
    scorers = {t: challenge.task(t).scorer_declaration for t in phase.tasks if t in known}
    names = [board.name for board in phase.leaderboards]
    for index, board in enumerate(phase.leaderboards):
        where = f"leaderboards[{index}]"
        if board.name in IMPLICIT_BOARDS:
            yield (
                f"{where}.name",
                (f"every phase already has a board {board.name!r}: choose another name"),
            )
        elif board.name in names[:index]:
            yield f"{where}.name", f"board name {board.name!r} is used twice in this phase"
        for location, message in _board_problems(board, phase.tasks, scorers):
            yield f"{where}.{location}", message


def _known(challenge: Challenge, phase: Phase) -> bool:
    """True when every task of ``phase`` exists (another check names the unknown ones)."""
    return all(name in {task.name for task in challenge.tasks} for name in phase.tasks)


def _board_problems(
    board: BoardSpec, phase_tasks: Sequence[str], scorers: Mapping[str, ScorerDeclaration]
) -> Iterator[tuple[str, str]]:
    """Problems of one board against its phase: unknown tasks, metrics not reported."""
    for position, task in enumerate(board.tasks):
        if task not in phase_tasks:
            yield (
                f"tasks[{position}]",
                (f"task {task!r} is not in this phase (tasks: {', '.join(phase_tasks)})"),
            )
    tasks = [t for t in board.tasks or phase_tasks if t in scorers]
    if board.aggregation == "metric" and len(board.tasks or phase_tasks) != 1:
        yield "tasks", "aggregation 'metric' orders by one task's metric: name exactly one task"
    for position, metric in enumerate(board.metrics):
        yield from _metric_problems(metric, position, tasks, scorers)


def _metric_problems(
    metric: str, position: int, tasks: Sequence[str], scorers: Mapping[str, ScorerDeclaration]
) -> Iterator[tuple[str, str]]:
    """A board metric must be reported by every task, with one direction; the first must rank."""
    where = f"metrics[{position}]"
    missing = [t for t in tasks if metric not in scorers[t].metric_names]
    if missing:
        yield (
            where,
            (
                f"{noun(len(missing), 'task')} {', '.join(missing)} "
                f"{noun(len(missing), 'does', 'do')} not report {metric!r}"
            ),
        )
        return
    directions = {scorers[t].metric(metric).direction for t in tasks}
    if len(directions) > 1:
        yield where, f"{metric!r} improves in different directions across the board's tasks"
    elif position == 0 and Direction.NEUTRAL in directions:
        yield where, f"{metric!r} is a count, not a score: rank on another metric"
