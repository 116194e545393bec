"""The ``proctor`` command: one Typer app; each face module registers its own commands."""

from __future__ import annotations

import typer

from proctor.cli import (
    catalog_cmd,
    console_cmd,
    env_cmd,
    run_cmd,
    score_auc,
    score_ehealthkd,
    score_physionet,
    score_table,
    segeval_cmd,
    service_cmd,
    team_cmd,
    token_cmd,
    worker_cmd,
)
from proctor.cli.exit_status import ProctorGroup


def build_app() -> typer.Typer:
    """Assemble the CLI from its command modules (no work happens at import time).

    Exit statuses: 0 success, 1 the entry failed (or a scorer found failed records), 2 usage,
    configuration or input-file error, 3 a fault of the host or a bug in Proctor, 130
    interrupted; :mod:`proctor.cli.exit_status` maps errors to them for every command.
    """
    app = typer.Typer(
        name="proctor",
        help="Run scientific challenges whose participants submit code.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        cls=ProctorGroup,
    )
    score = typer.Typer(
        help="Score prediction files exactly as the official scorers do.", no_args_is_help=True
    )
    # Registration order is the order of ``proctor --help`` and ``proctor score --help``.
    run_cmd.register(app, score)
    catalog_cmd.register(app, score)
    env_cmd.register(app, score)
    score_physionet.register(app, score)
    score_auc.register(app, score)
    score_ehealthkd.register(app, score)
    score_table.register(app, score)
    segeval_cmd.register(app, score)
    service_cmd.register(app, score)
    team_cmd.register(app, score)
    token_cmd.register(app, score)
    console_cmd.register(app, score)
    worker_cmd.register(app, score)
    app.add_typer(score, name="score")
    return app


def main() -> None:
    """Console entry point."""
    build_app()()
