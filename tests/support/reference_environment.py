"""The bundled reference environment declared in a test challenge's own challenge.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from paths import BUNDLED_ENV


def declare_reference_environment(challenge: Path, **extra: Any) -> Path:
    """Make ``challenge`` declare the reference environment, with ``extra`` keys beside it.

    The declaration is the bundled one (python3 and gcc on bookworm, its wheel locks), so it
    builds to the store entry other tests share; ``extra`` adds e.g. ``participant_wheels``.
    """
    path = challenge / "challenge.yaml"
    data = yaml.safe_load(path.read_text())
    data["environment"] = {
        "name": "proctor-reference",
        "debian": {"suite": "bookworm", "packages": ["python3", "gcc"]},
        "python": {"requirements": str(BUNDLED_ENV / "requirements.in"),
                   "lock": str(BUNDLED_ENV / "requirements.lock")},
        "lock": str(BUNDLED_ENV / "environment.lock"),
        **extra,
    }  # fmt: skip
    path.write_text(yaml.safe_dump(data))
    return challenge
