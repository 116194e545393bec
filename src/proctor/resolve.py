"""The resolve step of a ``challenge.yaml``: the names it gives, turned into what runs them.

``spec`` knows the shape of a challenge only. Here the extension tables give what each name
may be: the driver table (:mod:`proctor.protocols.registry`) the settings model of each
protocol kind, the scorer table (:mod:`proctor.scoring.registry`) each built-in scorer and
scorer kind (the ``table`` kind's metrics from :mod:`proctor.scoring.table_metrics`). A name
nothing installed runs is refused, with its YAML location, when the file loads.
"""

from __future__ import annotations

from pathlib import Path

from proctor.protocols.registry import settings_models
from proctor.scoring.registry import scorer_catalog
from proctor.spec import loader
from proctor.spec.model import Challenge


def load_challenge(location: Path) -> Challenge:
    """Load the challenge at ``location`` (a folder or its ``challenge.yaml``) for evaluation.

    Its ``protocol:`` block is validated by the settings model of its kind's driver, each
    task's ``scorer`` against the scorer table. Raises ``ConfigError`` naming the file and the
    YAML path of the first problem.
    """
    return loader.load_challenge(location, settings_models(), scorer_catalog())
