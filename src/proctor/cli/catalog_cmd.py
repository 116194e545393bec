"""``proctor challenges``, ``proctor kit`` and ``proctor demo``."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from proctor.cli.build_display import RichBuild
from proctor.cli.figures import shown_number
from proctor.cli.progress_display import RichProgress
from proctor.cli.run_cmd import print_platform_faults, print_report
from proctor.services.local.catalog import (
    GENERATED_RECORDS,
    GENERATED_SECONDS,
    FreshRecords,
    list_challenges,
    write_kit_with,
)
from proctor.services.local.demo import demo_challenges, demo_entries, demo_leaderboard
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.services.local.prebuild import PrebuildPlan, prebuild_environments, prebuild_plan
from proctor.services.local.reports import EvaluationReport, Standing
from proctor.services.local.visceral import OrganBest, organ_board
from proctor.settings import Settings
from proctor.types import RunStatus

JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def challenges(as_json: JsonOption = False) -> None:
    """List the bundled reference challenges."""
    if as_json:
        rows = [
            {"name": i.name, "title": i.title, "protocol": i.protocol, "tasks": list(i.tasks),
             "phases": list(i.phases)}
            for i in list_challenges()
        ]  # fmt: skip
        typer.echo(json.dumps({"challenges": rows}, indent=2))
        return
    # Names are typed back (``proctor run --challenge NAME --task T``): one per line, never
    # cut; only the title may fold.
    table = Table(title="bundled challenges")
    for column in ("name", "protocol", "tasks", "phases"):
        table.add_column(column, no_wrap=True)
    table.add_column("title", overflow="fold")
    for item in list_challenges():
        table.add_row(
            item.name, item.protocol, "\n".join(item.tasks), "\n".join(item.phases), item.title
        )
    Console().print(table)


def kit(  # noqa: PLR0917 - typer maps parameters to options
    name: Annotated[
        str,
        typer.Argument(
            help="A bundled challenge name or a challenge folder; with --server, a "
            "challenge of that server."
        ),
    ],
    dest: Annotated[Path, typer.Argument(help="New folder to write the kit into.")],
    seconds: Annotated[
        int | None,
        typer.Option(
            min=45,
            help="Generate the training records, this many seconds each (physionet2018; "
            "from 3600 on, whole nights at the 2018 rates; default: the bundled 60 s records "
            "make demo uses).",
        ),
    ] = None,
    records: Annotated[
        int | None,
        typer.Option(min=1, help="How many training records to generate (default: 8)."),
    ] = None,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            help="Download the kit of challenge NAME from this Proctor server, check its sha256 "
            "and unpack it.",
            show_default=False,
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option("--token", help="API token for --server (PROCTOR_TOKEN).", show_default=False),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Write a starting kit: DEST/entry, DEST/data, DEST/challenge (a replica), DEST/README.md.

    DEST/challenge is the challenge without its hidden data: `proctor run DEST/entry
    --challenge DEST/challenge` runs every stage and scores on the organizer's stand-in.

    The organizers' 2018 sample training script fits one classifier per record on 60 s
    windows: give it records of an hour or more (--seconds 3600).
    """
    if server is not None:
        _download_kit(name, dest, server, token, as_json)
        return
    fresh = None
    if seconds is not None or records is not None:
        fresh = FreshRecords(seconds or GENERATED_SECONDS, records or GENERATED_RECORDS)
    written, described = write_kit_with(name, dest, fresh)
    if described and not as_json:
        typer.echo(described)
    if as_json:
        typer.echo(json.dumps({"kit": str(dest), "written": [str(p) for p in written]}, indent=2))
        return
    for path in written:
        typer.echo(f"wrote {path}")
    if (dest / "entry").is_dir():
        typer.echo(
            f"try it: {typed_proctor()} run {dest / 'entry'} --challenge {dest / 'challenge'}"
        )
    else:
        typer.echo(f"no baseline entry: see {dest / 'README.md'} for what to upload")


def typed_proctor(argv0: str | None = None, on_path: str | None = None) -> str:
    """How to type the running ``proctor`` again: ``proctor``, or its path if the PATH misses it.

    ``.venv/bin/proctor`` after ``make demo``, whose venv is not activated.
    ``argv0``, ``on_path``: the command as started and what the PATH finds (default: this
    process's ``sys.argv[0]`` and ``shutil.which("proctor")``).
    """
    started = Path(argv0 if argv0 is not None else sys.argv[0])
    found = on_path if on_path is not None else shutil.which("proctor")
    if started.name != "proctor":
        return "proctor"  # run as python -m or from a test: nothing better to say
    if found is not None and Path(found).resolve() == started.resolve():
        return "proctor"
    return os.path.relpath(started) if started.is_absolute() else str(started)


def _try_it(dest: Path) -> None:
    """The hint after a kit is written: the command that runs its entry, as typed here."""
    typer.echo(f"try it: {typed_proctor()} run {dest / 'entry'} --challenge {dest / 'challenge'}")


def _download_kit(name: str, dest: Path, server: str, token: str | None, as_json: bool) -> None:
    """``proctor kit NAME DEST --server URL``: the server's kit, checked and unpacked."""
    from proctor.cli.api_client import api_client
    from proctor.services.platform.file_downloads import fetch_kit

    client = api_client(server, token)
    try:
        fetched = fetch_kit(client, name, dest)
    finally:
        client.close()
    if as_json:
        answer = {"kit": str(dest), "file": fetched.file.name, "sha256": fetched.file.sha256}
        typer.echo(json.dumps(answer, indent=2))
        return
    typer.echo(f"downloaded {fetched.file.name} ({fetched.file.size} bytes, sha256 checked)")
    typer.echo(f"wrote {dest}")
    if (dest / "challenge").is_dir():
        typer.echo(
            f"try it: {typed_proctor()} run {dest / 'entry'} --challenge {dest / 'challenge'}"
        )


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


def print_organ_board(challenge: str, rows: list[OrganBest]) -> None:
    """Print VISCERAL's board: the best Dice per organ, with the best per task (modality)."""
    if not rows:
        return
    tasks = sorted({task for row in rows for task in row.per_task})
    table = Table(title=f"best Dice per organ · {challenge}")
    for column in ("organ", "Dice", "entry", *tasks):
        table.add_column(column, justify="left" if column in ("organ", "entry") else "right")
    for row in rows:
        per_task = [
            f"{row.per_task[t][0]:.4f} ({row.per_task[t][1]})" if t in row.per_task else ""
            for t in tasks
        ]
        table.add_row(row.title, f"{row.dice:.4f}", row.entry, *per_task)
    Console().print(table)


def demo(as_json: JsonOption = False) -> None:
    """Run every bundled challenge's baseline and a trivial entry in the sandbox; rank them."""
    settings = Settings.from_env()
    console = Console()
    failures = 0
    results = []
    summary: list[str] = []
    challenges = demo_challenges()
    _prebuild(prebuild_plan(challenges, settings), settings, Console(stderr=True))
    for challenge in challenges:
        reports = []
        with tempfile.TemporaryDirectory(prefix="proctor-demo-") as scratch:
            for label, entry in demo_entries(challenge, Path(scratch)):
                if not as_json:
                    console.rule(f"{challenge.name} · {label}")
                report = _demo_run(RunRequest(entry, str(challenge.root)), settings, as_json)
                print_platform_faults(report)
                if not as_json:
                    print_report(report, console, brief=True)
                reports.append((label, report))
                failures += report.status is RunStatus.FAILED
        board = challenge.leaderboard
        metric = board.metric if board else ""
        standings = demo_leaderboard(challenge, reports)
        if as_json:
            results.append(_demo_json(challenge.name, metric, reports, standings))
            continue
        scores = {label: report.scores for label, report in reports}
        print_leaderboard(challenge.name, metric, standings, scores)
        print_organ_board(challenge.name, organ_board(reports))
        width = max(len(each.name) for each in challenges) + 1
        summary.append(summary_line(challenge.name, metric, standings, reports, width=width))
    if as_json:
        typer.echo(json.dumps({"challenges": results}, indent=2))
    else:
        print_summary(console, summary)
    raise typer.Exit(1 if failures else 0)


NEXT_STEPS = (
    "next:",
    "  .venv/bin/proctor kit NAME my-kit           a starting kit of challenge NAME",
    "  .venv/bin/proctor run my-kit/entry -c NAME  score its entry as above",
    "  docs/bundled-challenges.md                  what each challenge asks",
    "  (or 'source .venv/bin/activate' once, then type 'proctor')",
)
"""Where to look after ``make demo``: commands that work without activating the venv."""


def print_summary(console: Console, lines: list[str]) -> None:
    """The demo's summary, then the next steps: whole lines, never cut at 80 columns in a pipe."""
    console.print("\n".join(["", "summary", *lines, *NEXT_STEPS]), highlight=False, soft_wrap=True)


def summary_line(
    name: str,
    metric: str,
    standings: list[Standing],
    reports: list[tuple[str, EvaluationReport]],
    *,
    width: int = 16,
) -> str:
    """One line of the demo's summary: the challenge, its best entry's score, or what failed.

    ``physionet2018  baseline auprc 0.412 (rank 1 of 2)``; per task when there are several.
    """
    failed = [label for label, report in reports if report.status is RunStatus.FAILED]
    if not standings:
        return f"  {name:<{width}} no leaderboard" + (
            f"; failed: {', '.join(failed)}" if failed else ""
        )
    best = standings[0]
    values = ", ".join(
        f"{task} {shown_number(value)}" if len(best.scores) > 1 else shown_number(value)
        for task, value in best.scores.items()
    )
    line = f"  {name:<{width}} {best.entry} {metric} {values} (rank 1 of {len(standings)})"
    return line + (f"; failed: {', '.join(failed)}" if failed else "")


def _prebuild(plan: PrebuildPlan, settings: Settings, console: Console) -> None:
    """Build the demo's missing environments at once, saying so on stderr."""
    if not plan.worth_it:
        return
    console.print(f"building {len(plan.names)} environments at once: {', '.join(plan.names)}")
    for name, seconds in prebuild_environments(plan, settings):
        done = f"built in {seconds:.0f} s" if seconds is not None else "failed (retried on use)"
        console.print(f"environment {name}: {done}")


def _demo_run(request: RunRequest, settings: Settings, quiet: bool) -> EvaluationReport:
    """One demo evaluation, with progress bars on the terminal unless ``quiet``."""
    if quiet:
        return run_entry(request, settings)
    with RichProgress(Console(stderr=True)) as display, RichBuild(Console(stderr=True)) as builds:
        return run_entry(request, settings, display, builds=builds)


def _demo_json(
    challenge: str,
    metric: str,
    reports: list[tuple[str, EvaluationReport]],
    standings: list[Standing],
) -> dict[str, object]:
    """One challenge of ``demo --json``: each entry's report and the leaderboard."""
    board = [
        {"rank": r.rank, "entry": r.entry, "scores": r.scores, "mean_rank": r.mean_rank}
        for r in standings
    ]
    entries = [{"entry": label, "report": report.to_json()} for label, report in reports]
    return {"challenge": challenge, "metric": metric, "entries": entries, "leaderboard": board}


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``proctor challenges``, ``proctor kit`` and ``proctor demo``."""
    app.command("challenges")(challenges)
    app.command("kit")(kit)
    app.command("demo")(demo)
