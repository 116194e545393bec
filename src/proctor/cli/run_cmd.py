"""``proctor run``: replicate the official evaluation of an entry on this machine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from proctor.cli.build_display import RichBuild
from proctor.cli.figures import shown_number
from proctor.cli.progress_display import RichProgress
from proctor.cli.untrusted import plain
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.services.local.reports import EvaluationReport
from proctor.services.local.visceral import dashboard_rows
from proctor.settings import Settings
from proctor.types import Failure, RunStatus

INTERNAL_FAILURE = 3


def print_report(report: EvaluationReport, console: Console, *, brief: bool = False) -> None:
    """Print the stages and scores of ``report`` as tables.

    ``brief`` (the demo, whose leaderboards show the scores) leaves out the score tables and
    the dashboard.
    """
    stages = Table(title=f"{report.challenge} · phase {report.phase} · {report.status}")
    for column in ("stage", "status", "wall s", "cases", "message"):
        stages.add_column(column)
    for stage in report.stages:
        cases = stage.cases
        counted = f"{cases.passed}/{cases.total}" if cases.total else ""
        if cases.timed_out:
            counted += f" ({cases.timed_out} timed out)"
        wall = "hidden" if stage.figures_hidden else f"{stage.wall_s:.2f}"
        stages.add_row(plain(stage.label), str(stage.status), wall, counted, plain(stage.message))
    console.print(stages)
    if not brief:
        print_scores(report, console)
        print_dashboard(report, console)
    environment = report.environment
    if environment is not None:
        shown = environment.name
        if environment.digest:
            lock = {True: "matches the published lock", False: "DIFFERS from the published lock",
                    None: "no published lock"}[environment.matches_lock]  # fmt: skip
            shown += f" (digest {environment.digest[:12]}, {lock})"
        console.print(plain(f"environment: {shown}"))
    usage = report.usage
    if report.figures_hidden:
        console.print("usage: hidden (the phase withholds the figures of runs on hidden data)")
        return
    console.print(
        f"usage: {usage.wall_s:.2f} s wall, {usage.cpu_s:.2f} s CPU, "
        f"peak {usage.peak_memory_bytes / 2**20:.1f} MiB"
    )


INTERVAL_SUFFIXES = ("_ci95_low", "_ci95_high")
"""A scorer's 95% bootstrap bounds of metric M come as ``M_ci95_low`` and ``M_ci95_high``."""


def print_scores(report: EvaluationReport, console: Console) -> None:
    """Print the scores as one metric × task table, then the efficiency figures apart.

    A metric's 95% interval shows beside it as ``[low, high]``; counts show as integers.
    """
    if report.scores:
        console.print(_table("scores", report.scores, report))
    if any(report.efficiency.values()):
        console.print(_table("efficiency (exam)", report.efficiency, report))


def _table(title: str, rows: dict[str, dict[str, float]], report: EvaluationReport) -> Table:
    """Metrics down, tasks across; interval bounds folded into their metric's cell."""
    tasks = list(rows)
    metrics = list(
        dict.fromkeys(
            metric
            for values in rows.values()
            for metric in values
            if not metric.endswith(INTERVAL_SUFFIXES)
        )
    )
    table = Table(title=title)
    table.add_column("metric", no_wrap=True)
    for task in tasks:
        table.add_column(task, justify="right", no_wrap=True)
    for metric in metrics:
        table.add_row(metric, *(_cell(report, task, metric, rows[task]) for task in tasks))
    return table


def _cell(report: EvaluationReport, task: str, metric: str, values: dict[str, float]) -> str:
    """One task's ``metric`` as shown: ``0.824658 [0.79, 0.85]``, ``12``, or empty."""
    if metric not in values:
        return ""
    value = values[metric]
    shown = shown_number(value, count=metric in report.whole_metrics(task))
    low, high = (values.get(f"{metric}{suffix}") for suffix in INTERVAL_SUFFIXES)
    if low is not None and high is not None and high > low:  # one point is no interval
        shown += f" [{shown_number(low)}, {shown_number(high)}]"
    return shown


def print_dashboard(report: EvaluationReport, console: Console) -> None:
    """Print the scorer's private dashboard (VISCERAL: per metric and organ), if any."""
    rows = dashboard_rows(report)
    if not rows:
        return
    table = Table(title="dashboard · per metric and organ (hidden volumes)")
    for column in ("task", "metric", "organ", "empty", "count", "min", "max", "median", "mean"):
        table.add_column(
            column, justify="left" if column in ("task", "metric", "organ") else "right"
        )
    for row in rows:
        stats = (row.minimum, row.maximum, row.median, row.mean)
        table.add_row(row.task, row.metric, row.organ, str(row.empty), str(row.count),
                      *(shown_number(value) for value in stats))  # fmt: skip
    console.print(table)


def run(  # noqa: PLR0917 - typer maps parameters to options
    entry: Annotated[Path, typer.Argument(help="The entry: a .zip/.tar.gz archive or a folder.")],
    challenge: Annotated[
        str, typer.Option("--challenge", "-c", help="A challenge folder or a bundled name.")
    ],
    phase: Annotated[
        str | None, typer.Option(help="Phase to evaluate in (default: the last one).")
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=0,
            help="Cases at once; 0 = one per core (default: the challenge's choice).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object on stdout, no display.")
    ] = False,
    keep: Annotated[
        bool, typer.Option(help="Keep the run folder (entry, inputs, outputs) to inspect it.")
    ] = False,
) -> None:
    """Run ENTRY through prep, quiz, exam and score in the sandbox, as the official evaluation.

    Exit status: 0 scored or dry run passed; 1 the entry failed a stage; 2 usage or
    configuration error; 3 host fault or internal error; 130 interrupted.
    """
    settings = Settings.from_env()
    request = RunRequest(entry=entry, challenge=challenge, phase=phase, jobs=jobs, keep=keep)
    err = Console(stderr=True)
    if as_json:
        report = run_entry(request, settings)
    else:
        with RichProgress(err) as display, RichBuild(err) as builds:
            report = run_entry(request, settings, display, builds=builds)
    if report.run_dir is not None:
        typer.echo(f"run folder kept: {report.run_dir}", err=True)
    print_scorer_failure(report)
    print_platform_faults(report)
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2, allow_nan=False))
    else:
        print_report(report, Console())
    raise typer.Exit(exit_status(report))


def print_scorer_failure(report: EvaluationReport) -> None:
    """On stderr, where an organizer reads why scoring failed (never shown to participants)."""
    if report.failure is not Failure.SCORER:
        return
    where = report.run_dir or "the run folder (rerun with --keep)"
    typer.echo(
        f"organizers: why scoring failed is in {where}: score-error.txt and, for a "
        "scoring program, scoring-TASK.log (its output: never show it to participants)",
        err=True,
    )


def print_platform_faults(report: EvaluationReport) -> None:
    """On stderr, why the platform failed: this terminal is the organizer's own."""
    for fault in report.platform_faults:
        typer.echo(plain(f"platform fault (E-PLATFORM), {fault}"), err=True)


def exit_status(report: EvaluationReport) -> int:
    """The exit status of ``proctor run`` for ``report``.

    0 scored or dry run; 1 the entry failed a stage; 3 the fault was not the entry's (the
    scorer or its references, the platform).
    """
    if report.status is not RunStatus.FAILED:
        return 0
    return 1 if report.failure in (None, Failure.ENTRY) else INTERNAL_FAILURE


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``proctor run``."""
    app.command("run")(run)
