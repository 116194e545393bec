"""Placeholder until this command module is written."""

from __future__ import annotations

import typer


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Register nothing yet."""
