"""The scorer declarations (``proctor.types``) and the registered functions agree."""

from __future__ import annotations

from proctor.scoring.registry import get_scorer, registered_scorers
from proctor.types import SCORERS


def test_every_declared_scorer_is_registered_and_nothing_else() -> None:
    assert set(registered_scorers()) == set(SCORERS)


def test_each_registered_scorer_carries_its_own_declaration() -> None:
    for name in SCORERS:
        assert get_scorer(name).declaration is SCORERS[name]


def test_every_metric_has_a_direction_and_a_meaning() -> None:
    for declaration in SCORERS.values():
        assert declaration.metrics
        for metric in declaration.metrics:
            assert metric.summary, (declaration.name, metric.name)
