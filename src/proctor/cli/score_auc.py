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

import typer

from proctor.errors import InputFileError
from proctor.formats.label_csv import find_solution, read_label_column
from proctor.metrics._validation import UndefinedMetricWarning
from proctor.metrics.classification import roc_auc_score


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
