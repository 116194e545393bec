"""The ``proctor`` command: one Typer app; each face module registers its own commands."""

from __future__ import annotations

import importlib
import sys
import traceback

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


INTERNAL_ERROR = 3


def main() -> None:
    """Console entry point: map outcomes to exit statuses at the edge.

    0 success, 1 the entry failed (or a scorer found failed records), 2 usage or
    configuration error, 3 a fault of the host or a bug in Proctor, 130 interrupted.
    Usage errors and ``typer.Exit`` are handled by Typer itself.
    """
    app = build_app()
    try:
        app(standalone_mode=True)
    except ProctorError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(err.exit_code)
    except Exception:
        traceback.print_exc()
        typer.echo("internal error: this is a bug in Proctor, please report it", err=True)
        sys.exit(INTERNAL_ERROR)
