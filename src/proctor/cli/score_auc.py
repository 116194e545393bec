"""``proctor score auc SOLUTION PREDICTION``: the AutoWSL per-dataset ROC AUC.

SOLUTION is a ``*.solution`` file or a folder holding exactly one; PREDICTION is the CSV the
ingestion wrote. Both have a ``label`` column (header line ``label``) and must have the same
number of rows; the larger solution label is the positive class, hard 0/1 predictions are fine.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from proctor.errors import InputFileError
from proctor.metrics._validation import UndefinedMetricWarning
from proctor.metrics.classification import roc_auc_score


def find_solution(path: Path) -> Path:
    """``path`` itself, or the single ``*.solution`` file inside the folder ``path``."""
    if path.is_dir():
        found = sorted(path.glob("*.solution"))
        if len(found) != 1:
            names = ", ".join(p.name for p in found) or "none"
            raise InputFileError(
                f"{path}: expected exactly one *.solution file in the folder, found {names}"
            )
        return found[0]
    if not path.is_file():
        raise InputFileError(f"{path}: no such file or folder")
    return path


def read_label_column(path: Path) -> np.ndarray:
    """The ``label`` column of a CSV file as float64 (one value per row after the header)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise InputFileError(f"{path}: cannot read the file ({err})") from err
    if not lines:
        raise InputFileError(f"{path}: the file is empty; expected a header line 'label'")
    header = [name.strip().strip('"') for name in lines[0].split(",")]
    if "label" not in header:
        raise InputFileError(f"{path}, line 1: no 'label' column in the header {lines[0]!r}")
    column = header.index("label")
    values = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split(",")
        try:
            value = float(fields[column])
        except (IndexError, ValueError):
            raise InputFileError(
                f"{path}, line {number}: expected a number in column 'label', got {line[:60]!r}"
            ) from None
        if not math.isfinite(value):
            raise InputFileError(f"{path}, line {number}: the label must be finite")
        values.append(value)
    return np.array(values, dtype=np.float64)


def auc(
    solution: Annotated[Path, typer.Argument(help="A *.solution file or a folder with one.")],
    prediction: Annotated[Path, typer.Argument(help="The prediction CSV (header 'label').")],
    as_json: Annotated[bool, typer.Option("--json", help='Print {"auc": value}.')] = False,
) -> None:
    """ROC AUC of an AutoWSL prediction against its solution."""
    truth_file = find_solution(solution)
    truth = read_label_column(truth_file)
    scores = read_label_column(prediction)
    if truth.shape != scores.shape:
        raise InputFileError(
            f"{prediction} has {scores.size} rows but {truth_file} has {truth.size}: "
            "shapes must match (one prediction per test row, in order)"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        value = roc_auc_score(truth, scores)
    if as_json:
        typer.echo(json.dumps({"auc": None if math.isnan(value) else value}))
    else:
        typer.echo(f"auc: {value:.6f}")


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``auc`` to ``proctor score``."""
    score.command("auc")(auc)
