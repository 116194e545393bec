"""The ``proctor`` command: one Typer app; each face module registers its own commands.

A start imports only the modules that register the command it runs (``COMMANDS``): ``proctor
submit`` needs neither the pipeline nor the scorers, ``proctor run`` none of the service. Any
other call (``--help``, no command, a misspelled one) builds the whole app.
``tests/cli/test_cli_lazy_start.py`` checks that each narrow app gives its command exactly as the
whole app does.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Annotated

import typer

from proctor.cli.exit_status import ProctorGroup
from proctor.cli.help_text import reflow_helps

REGISTERS = (
    "run_cmd",
    "catalog_cmd",
    "files_cmd",
    "env_cmd",
    "score_physionet",
    "score_auc",
    "score_ehealthkd",
    "score_table",
    "segeval_cmd",
    "service_cmd",
    "team_cmd",
    "registration_cmd",
    "token_cmd",
    "console_cmd",
    "worker_cmd",
)
"""The modules of ``proctor.cli`` that register commands, in the order of ``proctor --help``."""

NEEDS: dict[str, tuple[str, ...]] = {"console_cmd": ("service_cmd", "team_cmd")}
"""Modules whose groups another extends (the console adds to ``user`` and ``team``)."""

_SCORE = ("score_physionet", "score_auc", "score_ehealthkd", "score_table")
_SERVICE = ("service_cmd",)
_CONSOLE = ("console_cmd",)
COMMANDS: dict[str, tuple[str, ...]] = {
    "run": ("run_cmd",),
    **dict.fromkeys(("challenges", "kit", "demo"), ("catalog_cmd",)),
    "files": ("files_cmd",),
    "env": ("env_cmd",),
    "score": _SCORE,
    "segeval": ("segeval_cmd",),
    **dict.fromkeys(
        ("serve", "submit", "status", "leaderboard", "rescore", "publish", "final", "cancel"),
        _SERVICE,
    ),
    "challenge": _SERVICE,
    "user": ("service_cmd", "console_cmd"),
    **dict.fromkeys(("flagged", "refund"), ("team_cmd",)),
    "team": ("team_cmd", "console_cmd"),
    "token": ("token_cmd",),
    **dict.fromkeys(("register", "registrations"), ("registration_cmd",)),
    **dict.fromkeys(("submissions", "logs", "entry", "phase"), _CONSOLE),
    "worker": ("worker_cmd",),
}
"""Each top-level command or group: the modules that register it or add to it."""


def _with_needs(modules: Iterable[str]) -> list[str]:
    """``modules`` and those they extend, in registration order."""
    wanted = set(modules)
    for module in list(wanted):
        wanted.update(NEEDS.get(module, ()))
    return [name for name in REGISTERS if name in wanted]


def _load(name: str) -> ModuleType:
    return importlib.import_module(f"proctor.cli.{name}")


def _show_version(wanted: bool) -> None:
    if wanted:
        from proctor import __version__

        typer.echo(f"proctor {__version__}")
        raise typer.Exit()


def _no_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print Proctor's version and exit.",
            is_eager=True,
            callback=_show_version,
        ),
    ] = False,
) -> None:
    del version


def build_app(modules: Sequence[str] = REGISTERS) -> typer.Typer:
    """Assemble the CLI from its command modules (no work happens at import time).

    ``modules``: which of ``REGISTERS`` to load (default: all of them).
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
    # A callback keeps the app a group even when it is narrowed to one command (Typer makes
    # a lone command the app itself, which would read ``proctor run ENTRY``'s "run" as ENTRY).
    app.callback()(_no_options)
    for name in _with_needs(modules):
        _load(name).register(app, score)
    if score.registered_commands:
        app.add_typer(score, name="score")
    reflow_helps(app)
    return app


def modules_for(args: Sequence[str]) -> Sequence[str]:
    """The modules a call with ``args`` needs: its command's, or all of them."""
    if args and args[0] in COMMANDS:
        return COMMANDS[args[0]]
    return REGISTERS


def main() -> None:
    """Console entry point."""
    build_app(modules_for(sys.argv[1:]))()
