"""The bundled reference challenges: each a folder with a ``challenge.yaml``."""

from __future__ import annotations

from pathlib import Path


def bundled_root() -> Path:
    """The folder holding the bundled challenges."""
    return Path(__file__).resolve().parent


def bundled_names() -> list[str]:
    """Names of the bundled challenges (folders holding a ``challenge.yaml``).

    A folder is a Python package, so its name has ``_`` where the challenge's has ``-``
    (``visceral_anatomy3`` holds ``visceral-anatomy3``).
    """
    return sorted(p.parent.name.replace("_", "-") for p in bundled_root().glob("*/challenge.yaml"))


def folder_name(name: str) -> str:
    """The folder of the bundled challenge called ``name`` (``-`` written ``_``)."""
    return name.replace("-", "_")
