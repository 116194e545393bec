"""The scorer table: every built-in scorer and table metric declares what it reports."""

from __future__ import annotations

from proctor.scoring.registry import scorer_catalog
from proctor.scoring.table_metrics import BUILTIN_TABLE_METRICS


def test_every_metric_has_a_direction_and_a_meaning() -> None:
    for declaration in scorer_catalog().named.values():
        assert declaration.metrics
        for metric in declaration.metrics:
            assert metric.summary, (declaration.name, metric.name)


def test_every_table_metric_has_a_meaning_and_a_rankable_direction() -> None:
    names = [metric.name for metric in BUILTIN_TABLE_METRICS]
    assert len(names) == len(set(names))
    for metric in BUILTIN_TABLE_METRICS:
        assert metric.summary, metric.name
        assert metric.declaration.rankable, metric.name
