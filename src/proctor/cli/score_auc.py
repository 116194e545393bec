"""``proctor score auc SOLUTION PREDICTION``: the AutoWSL per-dataset ROC AUC.

SOLUTION is a ``*.solution`` file or a folder holding exactly one; PREDICTION is the CSV the
ingestion wrote. Both have a ``label`` column (header line ``label``) and must have the same
number of rows; the larger solution label is the positive class, hard 0/1 predictions are fine.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer

from proctor.services.local.autowsl import score_auc


def auc(
    solution: Annotated[Path, typer.Argument(help="A *.solution file or a folder with one.")],
    prediction: Annotated[Path, typer.Argument(help="The prediction CSV (header 'label').")],
    as_json: Annotated[bool, typer.Option("--json", help='Print {"auc": value}.')] = False,
) -> None:
    """ROC AUC of an AutoWSL prediction against its solution."""
    value = score_auc(solution, prediction)
    if as_json:
        typer.echo(json.dumps({"auc": None if math.isnan(value) else value}))
    else:
        typer.echo(f"auc: {value:.6f}")


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``auc`` to ``proctor score``."""
    score.command("auc")(auc)
