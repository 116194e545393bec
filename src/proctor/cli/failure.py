"""Show a Proctor error at the edge: one unwrapped line on stderr, then its exit status."""

from __future__ import annotations

from typing import NoReturn

import typer

from proctor.errors import ProctorError


def fail(error: ProctorError) -> NoReturn:
    """Print ``error: MESSAGE`` on stderr and exit with the error's exit code."""
    typer.echo(f"error: {error}", err=True)
    raise typer.Exit(error.exit_code)


INTERRUPTED = 130


def interrupted() -> NoReturn:
    """Leave after Ctrl-C with status 130 (not 1, which would read as a failed entry)."""
    typer.echo("interrupted", err=True)
    raise typer.Exit(INTERRUPTED)
