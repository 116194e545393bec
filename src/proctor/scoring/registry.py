"""The one scorer registry: each name declared in ``proctor.types.SCORERS`` with its functions.

A scorer name in ``challenge.yaml`` is checked against the declarations when the file loads;
this table gives the functions. ``tests/test_scoring_registry.py`` checks both agree.
:func:`scorer_for` is what the pipeline asks: a built-in name gives its registered scorer, a
scoring program (``spec.scorer.ScoringProgram``) a scorer that runs it through the given
runners (the pipeline owns the sandbox; scorers never touch it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from proctor.errors import ConfigError
from proctor.scoring import autowsl, ehealthkd, physionet2017, physionet2018, visceral
from proctor.scoring.base import Scorer
from proctor.scoring.evalai import evalai_scorer
from proctor.scoring.program import program_scorer
from proctor.scoring.table import table_scorer
from proctor.spec.evalai_scorer import EvalaiScorer
from proctor.spec.programs import ProgramRunner
from proctor.spec.scorer import ScorerSettings, ScorerSpec, ScoringProgram
from proctor.spec.table_scorer import TableScorer
from proctor.types import SCORERS

_SCORERS: dict[str, Scorer] = {
    "physionet2018": Scorer(
        SCORERS["physionet2018"], physionet2018.score_task, physionet2018.check_vec_output
    ),
    "physionet2017": Scorer(
        SCORERS["physionet2017"], physionet2017.score_task, physionet2017.check_label_output
    ),
    "ehealthkd2019": Scorer(
        SCORERS["ehealthkd2019"], ehealthkd.score_task, ehealthkd.check_scenario_output
    ),
    "autowsl": Scorer(SCORERS["autowsl"], autowsl.score_task, autowsl.check_prediction),
    "visceral": Scorer(SCORERS["visceral"], visceral.score_task, visceral.check_organ_folder),
}


def get_scorer(name: str) -> Scorer:
    """The built-in scorer a task's ``scorer`` names.

    A ``ConfigError`` when a name is declared but not registered.
    """
    found = _SCORERS.get(name)
    if found is None:
        known = ", ".join(sorted(_SCORERS))
        raise ConfigError(f"unknown scorer {name!r}: built-in scorers are {known}")
    return found


def registered_scorers() -> tuple[str, ...]:
    """Every registered scorer name, sorted."""
    return tuple(sorted(_SCORERS))


ScorerFactory = Callable[[Any, "ProgramRunner | None", "ProgramRunner | None"], Scorer]
"""``(settings, runner, check_runner) -> Scorer`` of one scorer kind (a ``scorer:`` mapping)."""


def _program(spec: Any, runner: ProgramRunner | None, check_runner: ProgramRunner | None) -> Scorer:
    if runner is None:
        raise ConfigError("a scoring program runs in the sandbox: no sandbox was given to run it")
    return program_scorer(spec, runner, check_runner)


def _table(spec: Any, _runner: ProgramRunner | None, _check: ProgramRunner | None) -> Scorer:
    return table_scorer(spec.table)


def _evalai(spec: Any, runner: ProgramRunner | None, _check: ProgramRunner | None) -> Scorer:
    if runner is None:
        raise ConfigError("an EvalAI script runs in the sandbox: no sandbox was given to run it")
    return evalai_scorer(spec, runner)


_KINDS: dict[type[ScorerSettings], ScorerFactory] = {
    ScoringProgram: _program,
    TableScorer: _table,
    EvalaiScorer: _evalai,
}


def register_scorer_kind(model: type[ScorerSettings], factory: ScorerFactory) -> None:
    """Give the scorer kind whose settings are ``model`` (``spec.scorer``) its functions."""
    _KINDS[model] = factory


def scorer_for(
    spec: ScorerSpec,
    runner: ProgramRunner | None = None,
    check_runner: ProgramRunner | None = None,
) -> Scorer:
    """The scorer of a task's ``scorer`` value: a built-in one, or its kind's.

    ``runner`` runs an organizer's program in the sandbox (required by a scoring program),
    ``check_runner`` its output check (default: ``runner``).
    """
    if isinstance(spec, str):
        return get_scorer(spec)
    factory = _KINDS.get(type(spec))
    if factory is None:
        raise ConfigError(f"scorer kind {type(spec).__name__} has no registered functions")
    return factory(spec, runner, check_runner)
