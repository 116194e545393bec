"""EvalAI challenges Proctor cannot run as they are: refused, naming the key and the fix.

- ``remote_evaluation: True``: the host evaluates on their own machines, which Proctor
  cannot reach;
- ``is_docker_based: True`` (the challenge's, or a phase's): participants push Docker images
  that EvalAI runs, where Proctor takes uploaded files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proctor.errors import ConfigError

REMOTE = (
    "remote evaluation runs on the host's own machines, which Proctor cannot reach: if "
    "evaluation_script/ scores a submission from the annotation files in this folder, set "
    "`remote_evaluation: False` and import again (Proctor then runs it in its sandbox)"
)
DOCKER = (
    "participants of a Docker-based challenge push images that EvalAI runs; Proctor takes "
    "uploaded files: write the challenge for Proctor (`proctor challenge new DIR --protocol "
    "command`) or, if its phases take result files, set `is_docker_based: False` and import "
    "again"
)


def refuse_unrunnable(config: dict[str, Any], phases: dict[Any, Any], path: Path) -> None:
    """Raise ``ConfigError`` (at ``path``, naming the key) for a challenge Proctor cannot run."""
    if config.get("remote_evaluation"):
        raise ConfigError(REMOTE, path=path, location="remote_evaluation")
    places = [("is_docker_based", config)] + [
        (f"challenge_phases[{phase.get('codename') or key}].is_docker_based", phase)
        for key, phase in phases.items()
    ]
    for where, mapping in places:
        if mapping.get("is_docker_based") is True:
            raise ConfigError(DOCKER, path=path, location=where)
