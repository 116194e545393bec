"""``proctor challenges``, ``proctor kit`` and ``proctor demo``."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from proctor.cli.build_display import RichBuild
from proctor.cli.progress_display import RichProgress
from proctor.cli.run_cmd import print_report
from proctor.services.catalog import list_challenges, write_kit
from proctor.services.demo import demo_challenges, demo_entries, demo_leaderboard
from proctor.services.evaluate import RunRequest, run_entry
from proctor.services.reports import Standing
from proctor.settings import Settings
from proctor.types import RunStatus


def challenges() -> None:
    """List the bundled reference challenges."""
    table = Table(title="bundled challenges")
    for column in ("name", "protocol", "tasks", "phases", "title"):
        table.add_column(column)
    for item in list_challenges():
        table.add_row(
            item.name, item.protocol, ", ".join(item.tasks), ", ".join(item.phases), item.title
        )
    Console().print(table)


def kit(
    name: Annotated[str, typer.Argument(help="A bundled challenge name or a challenge folder.")],
    dest: Annotated[Path, typer.Argument(help="New folder to write the kit into.")],
) -> None:
    """Write a participant's starting kit: DEST/entry (baseline), DEST/data, DEST/README.md."""
    for path in write_kit(name, dest):
        typer.echo(f"wrote {path}")
    typer.echo(f"try it: proctor run {dest / 'entry'} --challenge {name}")


def _with_interval(value: float, scores: dict[str, float], metric: str) -> str:
    low, high = scores.get(f"{metric}_ci95_low"), scores.get(f"{metric}_ci95_high")
    text = f"{value:.6f}"
    if low is not None and high is not None:
        text += f" [{low:.3f}, {high:.3f}]"
    return text


def print_leaderboard(
    challenge: str,
    metric: str,
    standings: list[Standing],
    scores: dict[str, dict[str, dict[str, float]]],
) -> None:
    """Print a leaderboard: rank, entry, the metric per task, mean rank.

    A value shows its 95% bootstrap interval where the scorer gives one; ``scores`` maps
    entry → task → all its scores.
    """
    if not standings:
        return
    tasks = list(standings[0].scores)
    table = Table(title=f"leaderboard · {challenge} · {metric}")
    for column in ("rank", "entry", *tasks, "mean rank"):
        table.add_column(column, justify="left" if column == "entry" else "right")
    for row in standings:
        values = [
            _with_interval(row.scores[t], scores[row.entry].get(t, {}), metric) for t in tasks
        ]
        table.add_row(f"{row.rank:g}", row.entry, *values, f"{row.mean_rank:g}")
    Console().print(table)


def demo() -> None:
    """Run every bundled challenge's baseline and a constant entry in the sandbox; rank them."""
    settings = Settings.from_env()
    console = Console()
    failures = 0
    for challenge in demo_challenges():
        reports = []
        with tempfile.TemporaryDirectory(prefix="proctor-demo-") as scratch:
            for label, entry in demo_entries(challenge, Path(scratch)):
                console.rule(f"{challenge.name} · {label}")
                with (
                    RichProgress(Console(stderr=True)) as display,
                    RichBuild(Console(stderr=True)) as builds,
                ):
                    request = RunRequest(entry, str(challenge.root))
                    report = run_entry(request, settings, display, builds=builds)
                print_report(report, console)
                reports.append((label, report))
                failures += report.status is RunStatus.FAILED
        board = challenge.leaderboard
        metric = board.metric if board else ""
        standings = demo_leaderboard(challenge, reports)
        scores = {label: report.scores for label, report in reports}
        print_leaderboard(challenge.name, metric, standings, scores)
    raise typer.Exit(1 if failures else 0)


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``proctor challenges``, ``proctor kit`` and ``proctor demo``."""
    app.command("challenges")(challenges)
    app.command("kit")(kit)
    app.command("demo")(demo)
