"""The resolve step of a ``challenge.yaml``: its protocol block read by the driver of its kind.

``spec`` knows the shape of a challenge only; here the one driver table
(:mod:`proctor.protocols.registry`) gives the settings model of each protocol kind, so a kind
no driver runs is refused, with its YAML location, when the file loads.
"""

from __future__ import annotations

from pathlib import Path

from proctor.protocols.registry import settings_models
from proctor.spec import loader
from proctor.spec.model import Challenge


def load_challenge(location: Path) -> Challenge:
    """Load the challenge at ``location`` (a folder or its ``challenge.yaml``) for evaluation.

    Its ``protocol:`` block is validated by the settings model of its kind's driver. Raises
    ``ConfigError`` naming the file and the YAML path of the first problem.
    """
    return loader.load_challenge(location, settings_models())
