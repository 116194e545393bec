"""The bundled reference challenges: each a folder with a ``challenge.yaml``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

TrainingWriter = Callable[[Path, int, int], str]
"""Writes ``records`` public training records of ``seconds`` each into a new folder; returns
one line describing what it wrote (for the organizer's terminal)."""


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


def training_writer(name: str) -> TrainingWriter | None:
    """The generator of fresh training records of bundled challenge ``name``, if it has one.

    Only ``physionet2018`` has one (``proctor kit physionet2018 DEST --seconds S --records N``).
    """
    if name != "physionet2018":
        return None
    from proctor.challenges.physionet2018.generate import write_training

    return write_training
