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

from proctor.errors import InputFileError
from proctor.formats.vec import VecFormatError
from proctor.metrics._validation import MetricInputError
from proctor.metrics.physionet2018 import ArousalTally, RecordScore
from proctor.metrics.physionet_scores import LABELS_2017, parse_answer_lines, score_2017
from proctor.scoring.physionet2018 import record_name, score_vec_file

_RULE = "_______________________________"


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def _row(name: str, auroc: float, auprc: float) -> str:
    """One table line, ``%-11s  %8.6f  %8.6f`` as in the official scorer."""
    return f"{name:<11}  {auroc:8.6f}  {auprc:8.6f}"


def _score_one(tally: ArousalTally, vec_file: str, reference_dir: Path) -> RecordScore:
    """Score one ``.vec`` file into ``tally``, printing the official length warning first.

    The warning names the file as given on the command line (not normalised), as the official
    scorer prints it; it precedes the error of a bad value, as there.
    """
    try:
        score, warned = score_vec_file(tally, vec_file, reference_dir)
    except VecFormatError as err:
        if err.length_notes:
            typer.echo(f"Warning: wrong number of samples in {vec_file}")
        raise
    if warned:
        typer.echo(f"Warning: wrong number of samples in {vec_file}")
    return score


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
    tally = ArousalTally()
    results: dict[str, Any] = {}
    failed = False
    if not as_json:
        typer.echo("Record          AUROC     AUPRC")
        typer.echo(_RULE)
    for vec_file in vecfiles:
        record = record_name(vec_file)
        try:
            score = _score_one(tally, vec_file, reference_dir)
        except (InputFileError, MetricInputError) as err:
            failed = True
            results[record] = {"error": str(err)}
            if not as_json:
                typer.echo(str(err))
                typer.echo(f"{record:<11}  {'error':>8}  {'error':>8}")
            continue
        results[record] = {"auroc": _number(score.auroc), "auprc": _number(score.auprc)}
        if not as_json:
            typer.echo(_row(record, score.auroc, score.auprc))
    auroc, auprc = tally.gross_auroc(), tally.gross_auprc()
    if as_json:
        overall = {"auroc": _number(auroc), "auprc": _number(auprc)}
        typer.echo(json.dumps({"records": results, "overall": overall}, indent=2))
    else:
        typer.echo(_RULE)
        typer.echo(_row("Overall", auroc, auprc))
    raise typer.Exit(1 if failed else 0)


def _read_labels(path: Path, what: str) -> dict[str, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputFileError(f"{path}: cannot read the {what} file ({err})") from err
    return parse_answer_lines(text, source=str(path))


def physionet2017(
    answers: Annotated[Path, typer.Argument(help="answers.txt: RECORD,LABEL lines.")],
    reference: Annotated[Path, typer.Argument(help="REFERENCE.csv of the same records.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """2017 AF challenge score: F1 of N, A, O averaged (noise F1 shown, not averaged)."""
    result = score_2017(_read_labels(reference, "reference"), _read_labels(answers, "answers"))
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
