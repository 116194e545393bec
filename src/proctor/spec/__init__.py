"""The challenge description: ``challenge.yaml`` parsed once into frozen, typed objects."""

from proctor.spec.loader import CHALLENGE_FILE, load_challenge
from proctor.spec.model import Challenge, Phase, RecordsProtocol, StageLimits, Task

__all__ = [
    "CHALLENGE_FILE",
    "Challenge",
    "Phase",
    "RecordsProtocol",
    "StageLimits",
    "Task",
    "load_challenge",
]
