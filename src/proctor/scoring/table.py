"""The ``table`` scorer: one metric of each case's prediction CSV against its solution CSV.

A case's reference is ``references/CASE/<solution>``; its output is the case's folder holding
``<prediction>`` (the ``predictions`` protocol's upload: ``test/CASE/submission.csv``), or
the output file itself. The task's summary is the metric's mean over its cases (one, for a
predictions task) and the rows scored.

Whose fault: a prediction that cannot be read, or whose ids do not match the solution's
(missing, repeated, unknown), is the entry's (:class:`proctor.errors.OutputError`, the
message naming the file from the case folder and the line); a solution that cannot be read
is the organizer's (any other error: the score stage fails with ``E-SCORE``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from proctor.errors import OutputError
from proctor.formats.table_arrow import read_clean
from proctor.formats.table_csv import TableFormatError, read_table
from proctor.scoring.base import Scorer, TaskScores
from proctor.scoring.table_metrics import SCORE_METRICS, TableScore, score_table
from proctor.spec.table_scorer import TableOptions


def table_scorer(options: TableOptions) -> Scorer:
    """The scorer of a task's ``scorer: {table: ...}`` block."""

    def score(
        outputs: Path, references: Path, cases: Sequence[str], output_template: str
    ) -> TaskScores:
        return score_cases(options, outputs, references, cases, output_template)

    def check(output: Path) -> str | None:
        return check_prediction(options, output)

    return Scorer(options.declaration(), score, check)


def prediction_file(options: TableOptions, output: Path) -> Path:
    """The prediction CSV of one case's output: the folder's ``prediction`` file, or itself."""
    return output / options.prediction if output.is_dir() else output


def _shown(err: TableFormatError, name: str) -> str:
    """The refusal naming the file by ``name`` (never a host path)."""
    line = f", line {err.line}" if err.line else ""
    return f"{name}{line}: {err.problem}"


def check_prediction(options: TableOptions, output: Path) -> str | None:
    """None when the case's prediction reads as a table with the id column, else why not."""
    path = prediction_file(options, output)
    name = path.name
    if not path.is_file():
        return f"{name}: missing: write the predictions as {options.prediction} (id,...)"
    needs_target = options.metric not in SCORE_METRICS
    clean = read_clean(path)  # the fast reader: a clean file needs no second look
    if (
        clean is not None
        and options.id in clean.header
        and (options.target in clean.header or not needs_target)
    ):
        return None
    try:
        table = read_table(path)
        table.column(options.id, "id")
        if needs_target:
            table.column(options.target, "target")
    except TableFormatError as err:
        return _shown(err, name)
    return None


def score_cases(
    options: TableOptions,
    outputs: Path,
    references: Path,
    cases: Sequence[str],
    output_template: str,
) -> TaskScores:
    """The metric of every case, their mean as the task's summary, and the rows scored."""
    per_case: dict[str, dict[str, float]] = {}
    rows = 0
    for case in cases:
        solution = references / case / options.solution
        if not solution.is_file():
            raise FileNotFoundError(f"the hidden reference {case}/{options.solution} is missing")
        prediction = prediction_file(options, outputs / output_template.format(record=case))
        result = _score_case(options, solution, prediction)
        per_case[case] = {options.metric: result.value, "rows": float(result.rows)}
        rows += result.rows
    values = [row[options.metric] for row in per_case.values()]
    summary = {
        options.metric: float(np.mean(values)) if values else float("nan"),
        "rows": float(rows),
    }
    return TaskScores(summary, per_case)


def _score_case(options: TableOptions, solution: Path, prediction: Path) -> TableScore:
    try:
        return score_table(solution, prediction, options)
    except TableFormatError as err:
        if err.path != prediction:
            raise
        raise OutputError(_shown(err, prediction.name)) from err
