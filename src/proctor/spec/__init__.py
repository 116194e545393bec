"""The challenge description: ``challenge.yaml`` parsed once into frozen, typed objects."""

from proctor.spec.leaderboards import BoardSpec, find_board, metric_directions, phase_boards
from proctor.spec.loader import CHALLENGE_FILE
from proctor.spec.model import Challenge, Phase, ResourceLimits, Task
from proctor.spec.protocols import ProtocolSettings

__all__ = [
    "CHALLENGE_FILE",
    "BoardSpec",
    "Challenge",
    "Phase",
    "ProtocolSettings",
    "ResourceLimits",
    "Task",
    "find_board",
    "metric_directions",
    "phase_boards",
]
