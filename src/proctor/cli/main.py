"""The ``proctor`` command: one Typer app; each face module registers its own commands."""

from __future__ import annotations

import importlib
import sys

import typer

from proctor.errors import ProctorError

# Each module defines ``register(app: typer.Typer, score: typer.Typer) -> None``.
COMMAND_MODULES = (
    "proctor.cli.run_cmd",
    "proctor.cli.catalog_cmd",
    "proctor.cli.score_physionet",
    "proctor.cli.score_auc",
    "proctor.cli.score_ehealthkd",
    "proctor.cli.segeval_cmd",
)


def build_app() -> typer.Typer:
    """Assemble the CLI from its command modules (no work happens at import time)."""
    app = typer.Typer(
        name="proctor",
        help="Run scientific challenges whose participants submit code.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    score = typer.Typer(
        help="Score prediction files exactly as the official scorers do.", no_args_is_help=True
    )
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app, score)
    app.add_typer(score, name="score")
    return app


def main() -> None:
    """Console entry point: map Proctor errors to their exit codes at the edge."""
    app = build_app()
    try:
        app(standalone_mode=True)
    except ProctorError as err:  # pragma: no cover - typer handles most, this is the safety net
        typer.echo(f"error: {err}", err=True)
        sys.exit(err.exit_code)
