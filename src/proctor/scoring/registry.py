"""The one scorer table: the built-in scorers by name, and the scorer kinds by kind.

A task's ``scorer`` is a built-in scorer's name (``physionet2018``) or a scorer kind's mapping
(``{table: {...}}``, a scoring program, ``{evalai: ...}``). Each kind's module declares it, a
:class:`ScorerKind` carrying its settings model and what makes its scorer; :data:`BUILTIN_KINDS`
lists them. :func:`scorer_catalog` is what a load validates a task's ``scorer`` against
(``proctor.resolve``); :func:`scorer_for` is what the pipeline asks: the scorer of a task's
``scorer``, running an organizer's program through the given runners (the pipeline owns the
sandbox; scorers never touch it).
"""

from __future__ import annotations

from proctor.errors import ConfigError
from proctor.scoring import (
    autowsl,
    ehealthkd,
    evalai,
    physionet2017,
    physionet2018,
    program,
    table,
    visceral,
)
from proctor.scoring.base import Scorer, ScorerKind
from proctor.spec.programs import ProgramRunner
from proctor.spec.scorer import ScorerCatalog, ScorerSpec
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

BUILTIN_KINDS: tuple[ScorerKind, ...] = (program.KIND, table.KIND, evalai.KIND)
"""The scorer kinds Proctor ships (a ``scorer:`` mapping with no kind is a scoring program)."""


def get_scorer(name: str) -> Scorer:
    """The built-in scorer a task's ``scorer`` names; a ``ConfigError`` for an unknown name."""
    found = _SCORERS.get(name)
    if found is None:
        known = ", ".join(sorted(_SCORERS))
        raise ConfigError(f"unknown scorer {name!r}: built-in scorers are {known}")
    return found


def scorer_kinds() -> dict[str, ScorerKind]:
    """Every scorer kind by the name a ``scorer:`` mapping gives."""
    return {kind.kind: kind for kind in BUILTIN_KINDS}


def scorer_catalog() -> ScorerCatalog:
    """What a task's ``scorer`` may be: the built-in scorers' declarations, the kinds' models."""
    named = {name: scorer.declaration for name, scorer in _SCORERS.items()}
    kinds = {name: kind.settings_model for name, kind in scorer_kinds().items()}
    return ScorerCatalog(named, kinds)


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
    for kind in scorer_kinds().values():
        if type(spec) is kind.settings_model:
            return kind.make(spec, runner, check_runner)
    raise ConfigError(f"scorer kind {type(spec).__name__} is not in the scorer table")
