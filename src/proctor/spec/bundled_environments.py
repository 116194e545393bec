"""Environment declarations bundled with Proctor, which a challenge names instead of copying.

``environment: classic-physionet`` in a ``challenge.yaml`` stands for the declaration in
``proctor/challenges/environment-classic-physionet/environment.yaml`` (its paths relative to
that folder), so organizers reuse an environment Proctor keeps locked and tested.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from proctor.challenges import bundled_root
from proctor.errors import ConfigError
from proctor.spec.environment import EnvironmentSpec

DECLARATION_FILE = "environment.yaml"
FOLDER_PREFIX = "environment-"


def bundled_environment_names() -> list[str]:
    """The names of the bundled environment declarations."""
    found = bundled_root().glob(f"{FOLDER_PREFIX}*/{DECLARATION_FILE}")
    return sorted(p.parent.name.removeprefix(FOLDER_PREFIX) for p in found)


def bundled_declaration(name: str, path: Path, location: str) -> tuple[EnvironmentSpec, Path]:
    """The declaration bundled as ``name`` and its file; ``path``/``location`` name the user.

    Its relative paths are left for the caller to resolve against the file's folder.
    """
    file = bundled_root() / f"{FOLDER_PREFIX}{name}" / DECLARATION_FILE
    if not file.is_file():
        known = ", ".join(["host", *bundled_environment_names()])
        raise ConfigError(
            f"no bundled environment named {name!r}: use one of {known}, or declare one",
            path=path,
            location=location,
        )
    data = yaml.safe_load(file.read_text(encoding="utf-8"))
    try:
        return EnvironmentSpec.model_validate(data), file
    except ValidationError as err:
        raise ConfigError(f"bundled environment {name!r} is invalid: {err}", path=file) from None
