"""``proctor score physionet2018`` and ``proctor score physionet2017``: the official scorers' CLIs.

``physionet2018`` prints the table of the May-2018 ``score2018.py`` (header, one line per record
or the error and ``error error``, then ``Overall``) and exits 1 when any record failed; failed
records are left out of the gross totals, as there.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer

from proctor.services.local.physionet import (
    LABELS_2017,
    ArousalScoring,
    RecordRow,
    missing_answers_2017,
    score_physionet2017,
)

_RULE = "_______________________________"


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def _row(name: str, auroc: float, auprc: float) -> str:
    """One table line, ``%-11s  %8.6f  %8.6f`` as in the official scorer."""
    return f"{name:<11}  {auroc:8.6f}  {auprc:8.6f}"


def _print_record(vec_file: str, row: RecordRow, as_json: bool) -> dict[str, float | str | None]:
    """Print a record's lines and return its JSON entry.

    The length warning names the file as given on the command line and is printed with
    ``--json`` too; without ``--json`` the record's line follows, or its error and ``error``.
    """
    if row.warned:
        typer.echo(f"Warning: wrong number of samples in {vec_file}")
    if row.error is not None:
        if not as_json:
            typer.echo(row.error)
            typer.echo(f"{row.record:<11}  {'error':>8}  {'error':>8}")
        return {"error": row.error}
    if not as_json:
        typer.echo(_row(row.record, row.auroc, row.auprc))
    return {"auroc": _number(row.auroc), "auprc": _number(row.auprc)}


def physionet2018(
    vecfiles: Annotated[list[str], typer.Argument(metavar="RECORD.vec...", help="Predictions.")],
    reference_dir: Annotated[
        Path, typer.Option("-r", "--reference-dir", help="Folder of RECORD-arousal.mat files.")
    ] = Path("training"),
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of the table.")] = (
        False
    ),
) -> None:
    """Gross AUROC/AUPRC of 2018 arousal predictions, exactly as the official score2018.py."""
    scoring = ArousalScoring(reference_dir)
    results: dict[str, Any] = {}
    failed = False
    if not as_json:
        typer.echo("Record          AUROC     AUPRC")
        typer.echo(_RULE)
    for vec_file in vecfiles:
        row = scoring.score(vec_file)
        failed = failed or row.error is not None
        results[row.record] = _print_record(vec_file, row, as_json)
    overall = scoring.overall()
    if as_json:
        totals = {"auroc": _number(overall.auroc), "auprc": _number(overall.auprc)}
        typer.echo(json.dumps({"records": results, "overall": totals}, indent=2))
    else:
        typer.echo(_RULE)
        typer.echo(_row("Overall", overall.auroc, overall.auprc))
    raise typer.Exit(1 if failed else 0)


def physionet2017(
    answers: Annotated[Path, typer.Argument(help="answers.txt: RECORD,LABEL lines.")],
    reference: Annotated[Path, typer.Argument(help="REFERENCE.csv of the same records.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="Refuse missing answers (exit 1) instead of scoring them as noise."
        ),
    ] = False,
) -> None:
    """2017 AF challenge score: F1 of N, A, O averaged (noise F1 shown, not averaged)."""
    result = score_physionet2017(answers, reference)
    missing = missing_answers_2017(answers, reference) if strict else []
    if missing:
        shown = ", ".join(missing[:20]) + (
            f" and {len(missing) - 20} more" if len(missing) > 20 else ""
        )
        typer.echo(f"error: {len(missing)} records have no answer: {shown}", err=True)
        raise typer.Exit(1)
    if as_json:
        f1 = {label: _number(value) for label, value in result.f1.items()}
        payload = {"f1": f1, "score": _number(result.score), "confusion": result.confusion}
        typer.echo(json.dumps(payload, indent=2))
        return
    names = {"N": "Normal rhythm", "A": "AF rhythm", "O": "Other rhythm", "~": "Noisy recordings"}
    for label in LABELS_2017:
        typer.echo(f"F1 {label} ({names[label]}): {result.f1[label]:.4f}")
    typer.echo(f"Final F1 score (mean of N, A, O): {result.score:.4f}")


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``physionet2018`` and ``physionet2017`` to ``proctor score``."""
    score.command("physionet2018")(physionet2018)
    score.command("physionet2017")(physionet2017)
