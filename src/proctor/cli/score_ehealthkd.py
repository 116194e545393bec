"""``proctor score ehealthkd``: the eHealth-KD 2019 scorer, with the official tool's output.

Mirrors the official ``evaltest`` command: SUBMISSIONS is a folder of participant folders, each
holding submission folders (with ``--single``: one participant's folder of submission folders,
reported under that folder's name). Each submission folder holds ``scenario1-main/``,
``scenario2-taskA/`` and ``scenario3-taskB/``; GOLD holds the same three folders.

Output: JSON with sorted keys (``--pretty`` indents it); ``--best`` keeps, per participant and
scenario, the submission with the highest F1 (the first one on ties); ``--csv`` (needs ``--best``)
prints that as a table with one row per scenario and measure and one column per participant
(``--pretty`` makes it HTML). Unlike the official tool, folders are visited in name order, so the
output (and the tie-breaking) does not depend on the file system.
"""

from __future__ import annotations

import csv
import html
import io
import json
from pathlib import Path
from typing import Annotated

import typer

from proctor.errors import UsageError
from proctor.services.local.ehealthkd import (
    SCENARIO_KEYS,
    Record,
    Submission,
    best_per_scenario,
    score_participants,
)

Cell = float | str
"""One table cell: a count, a score or a submission name."""


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``ehealthkd`` to the ``proctor score`` group."""
    score.command("ehealthkd")(score_ehealthkd)


def score_ehealthkd(
    submissions: Annotated[
        Path,
        typer.Argument(
            metavar="SUBMISSIONS",
            help="Folder of participant folders (with --single: one participant's folder).",
        ),
    ],
    gold: Annotated[
        Path, typer.Argument(metavar="GOLD", help="Gold folder holding the three scenario folders.")
    ],
    *,
    single: Annotated[
        bool,
        typer.Option(
            "--single", help="SUBMISSIONS is one participant's folder of submission folders."
        ),
    ] = False,
    best: Annotated[
        bool,
        typer.Option("--best", help="Keep only each participant's best submission per scenario."),
    ] = False,
    as_csv: Annotated[
        bool, typer.Option("--csv", help="Print the --best results as a CSV table.")
    ] = False,
    pretty: Annotated[
        bool, typer.Option("--pretty", help="Indent the JSON, or make the table HTML.")
    ] = False,
) -> None:
    """Score eHealth-KD 2019 submissions exactly as the official evaluation script does."""
    if as_csv and not best:
        raise UsageError("--csv implies --best: add --best (the table lists best submissions)")
    scored = score_participants(submissions, gold, single=single)
    for message in scored.warnings:
        typer.echo(f"warning: {message}", err=True)
    typer.echo(render(scored.submissions, best=best, as_csv=as_csv, pretty=pretty))


def render(results: dict[str, list[Submission]], *, best: bool, as_csv: bool, pretty: bool) -> str:
    """The text the official tool prints for these results and options."""
    if not best:
        return json.dumps(results, sort_keys=True, indent=2 if pretty else None)
    table = best_per_scenario(results)
    if not as_csv:
        return json.dumps(table, sort_keys=True, indent=2 if pretty else None)
    return _html_table(table) if pretty else _csv_table(table)


def _table_rows(
    table: dict[str, dict[str, Record]],
) -> tuple[list[str], list[tuple[str, list[Cell]]]]:
    """Participants in name order, and one row per scenario and measure (official row order)."""
    participants = sorted(table)
    rows: list[tuple[str, list[Cell]]] = []
    for key in SCENARIO_KEYS.values():
        first = table[participants[0]][key] if participants else {}
        for measure in first:
            rows.append((f"{key}-{measure}", [table[p][key][measure] for p in participants]))
    return participants, rows


def _row_is_float(cells: list[Cell]) -> bool:
    # A measure column holding any float is a float column in the official (pandas) table.
    return any(isinstance(cell, float) for cell in cells)


def _csv_table(table: dict[str, dict[str, Record]]) -> str:
    participants, rows = _table_rows(table)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["", *participants])
    for name, cells in rows:
        floats = _row_is_float(cells)
        writer.writerow([name, *(_plain(cell, floats) for cell in cells)])
    return buffer.getvalue()


def _plain(cell: Cell, floats: bool) -> str:
    if isinstance(cell, str):
        return cell
    return repr(float(cell)) if floats else str(cell)


def _html_table(table: dict[str, dict[str, Record]]) -> str:
    participants, rows = _table_rows(table)
    lines = ['<table border="1" class="dataframe">', "  <thead>"]
    lines += ['    <tr style="text-align: right;">', "      <th>name</th>"]
    lines += [f"      <th>{html.escape(p)}</th>" for p in participants]
    lines += ["    </tr>", "  </thead>", "  <tbody>"]
    for name, cells in rows:
        floats = _row_is_float(cells)
        lines += ["    <tr>", f"      <th>{html.escape(name)}</th>"]
        lines += [f"      <td>{html.escape(_display(cell, floats))}</td>" for cell in cells]
        lines.append("    </tr>")
    lines += ["  </tbody>", "</table>"]
    return "\n".join(lines)


def _display(cell: Cell, floats: bool) -> str:
    """Six decimals with trailing zeros trimmed (keeping one), as pandas shows table floats."""
    if isinstance(cell, str) or not floats:
        return str(cell)
    text = f"{cell:.6f}".rstrip("0")
    return text + "0" if text.endswith(".") else text
