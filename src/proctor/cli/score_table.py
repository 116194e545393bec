"""``proctor score table SOLUTION PREDICTION --metric NAME``: one metric of a Kaggle-style CSV.

SOLUTION is ``id,TARGET`` (the reference); PREDICTION is ``id,TARGET``, or for roc_auc,
average_precision and log_loss ``id,SCORE`` (the positive class's score) or
``id,CLASS1,CLASS2,...`` (one probability column per class). Rows are matched by id; bad
input exits 2 with a message naming the file and line.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer

from proctor.services.local.table import TABLE_METRICS, score_table_files


def table(  # noqa: PLR0917 - typer maps parameters to options
    solution: Annotated[Path, typer.Argument(help="The solution CSV: id,TARGET.")],
    prediction: Annotated[Path, typer.Argument(help="The prediction CSV, rows matched by id.")],
    metric: Annotated[str, typer.Option("--metric", help=f"One of: {', '.join(TABLE_METRICS)}.")],
    id_column: Annotated[str, typer.Option("--id", help="The id column of both files.")] = "id",
    target: Annotated[str, typer.Option("--target", help="The answer column.")] = "target",
    positive: Annotated[
        str | None,
        typer.Option(
            "--positive",
            help="roc_auc, average_precision, log_loss: the positive class of a one-column "
            "score (default: the greater label).",
        ),
    ] = None,
    k: Annotated[
        int | None, typer.Option("--k", help="map_at_k: predictions counted per row.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help='Print {"metric": NAME, "value": V, "rows": N}.')
    ] = False,
) -> None:
    """One metric of a prediction CSV against its solution CSV, rows matched by id."""
    result = score_table_files(
        solution, prediction, metric, id_column=id_column, target=target, positive=positive, k=k
    )
    value = None if math.isnan(result.value) else result.value
    if as_json:
        typer.echo(json.dumps({"metric": result.metric, "value": value, "rows": result.rows}))
    else:
        shown = "undefined" if value is None else f"{value:.6f}"
        typer.echo(f"{result.metric}: {shown} ({result.rows} rows)")


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``table`` to ``proctor score``."""
    score.command("table")(table)
