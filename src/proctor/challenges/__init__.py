"""The bundled reference challenges: each a folder with a ``challenge.yaml``."""

from __future__ import annotations

from pathlib import Path


def bundled_root() -> Path:
    """The folder holding the bundled challenges."""
    return Path(__file__).resolve().parent


def bundled_names() -> list[str]:
    """Names of the bundled challenges (folders holding a ``challenge.yaml``)."""
    return sorted(p.parent.name for p in bundled_root().glob("*/challenge.yaml"))
