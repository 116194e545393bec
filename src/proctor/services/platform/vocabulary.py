"""The domain types and display constants the platform's answers carry, named for the faces.

A page receives a challenge's spec and a phase's boards from the services; it reads them but
never loads, resolves or ranks anything itself. Faces import these names from here, so the
import contract "faces import only services" holds without copying the types.
"""

from __future__ import annotations

from proctor.leaderboard import Board
from proctor.spec import Challenge, Phase
from proctor.spec.display import DEFAULT_PRECISION, PAGE_NAMES
from proctor.spec.leaderboards import default_metric
from proctor.spec.scorer import MetricDeclaration

__all__ = [
    "DEFAULT_PRECISION",
    "PAGE_NAMES",
    "Board",
    "Challenge",
    "MetricDeclaration",
    "Phase",
    "default_metric",
]
