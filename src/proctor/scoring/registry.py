"""The one scorer registry: each name declared in ``proctor.types.SCORERS`` with its functions.

A scorer name in ``challenge.yaml`` is checked against the declarations when the file loads;
this table gives the functions. ``tests/test_scoring_registry.py`` checks both agree. A scorer
kind with options (``scorer: {table: ...}``) is built from its parsed block instead.
"""

from __future__ import annotations

from proctor.errors import ConfigError
from proctor.scoring import autowsl, ehealthkd, physionet2017, physionet2018, visceral
from proctor.scoring.base import Scorer
from proctor.scoring.table import table_scorer
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


def get_scorer(name: str | TableScorer) -> Scorer:
    """The scorer a task's ``scorer`` names (or describes, with options).

    A ``ConfigError`` when a name is declared but not registered.
    """
    if isinstance(name, TableScorer):
        return table_scorer(name.table)
    found = _SCORERS.get(name)
    if found is None:
        known = ", ".join(sorted(_SCORERS))
        raise ConfigError(f"unknown scorer {name!r}: built-in scorers are {known}")
    return found


def registered_scorers() -> tuple[str, ...]:
    """Every registered scorer name, sorted."""
    return tuple(sorted(_SCORERS))
