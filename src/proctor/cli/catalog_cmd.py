"""``proctor challenges``, ``proctor kit`` and ``proctor demo``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from proctor.cli.failure import fail
from proctor.cli.progress_display import RichProgress
from proctor.cli.run_cmd import print_report
from proctor.errors import ProctorError
from proctor.pipeline.report import RunStatus
from proctor.services.catalog import list_challenges, write_kit
from proctor.services.demo import demo_entries
from proctor.services.evaluate import RunRequest, run_entry
from proctor.settings import Settings


def challenges() -> None:
    """List the bundled reference challenges."""
    table = Table(title="bundled challenges")
    for column in ("name", "protocol", "tasks", "phases", "title"):
        table.add_column(column)
    try:
        found = list_challenges()
    except ProctorError as error:
        fail(error)
    for item in found:
        table.add_row(
            item.name, item.protocol, ", ".join(item.tasks), ", ".join(item.phases), item.title
        )
    Console().print(table)


def kit(
    name: Annotated[str, typer.Argument(help="A bundled challenge name or a challenge folder.")],
    dest: Annotated[Path, typer.Argument(help="New folder to write the kit into.")],
) -> None:
    """Write a participant's starting kit: DEST/entry (baseline), DEST/data, DEST/README.md."""
    try:
        written = write_kit(name, dest)
    except ProctorError as error:
        fail(error)
    for path in written:
        typer.echo(f"wrote {path}")
    typer.echo(f"try it: proctor run {dest / 'entry'} --challenge {name}")


def demo() -> None:
    """Run every bundled challenge's baseline end to end in the sandbox and print the results."""
    settings = Settings.from_env()
    console = Console()
    failures = 0
    for challenge, entry in demo_entries():
        console.rule(f"{challenge} · baseline entry {entry}")
        try:
            with RichProgress(Console(stderr=True)) as display:
                report = run_entry(RunRequest(entry, challenge), settings, display)
        except ProctorError as error:
            fail(error)
        print_report(report, console)
        failures += report.status is RunStatus.FAILED
    raise typer.Exit(1 if failures else 0)


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``proctor challenges``, ``proctor kit`` and ``proctor demo``."""
    app.command("challenges")(challenges)
    app.command("kit")(kit)
    app.command("demo")(demo)
