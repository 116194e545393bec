"""A test plug-in: a new scorer, and a new scorer kind, in one module outside Proctor's package.

``exact_rows``: each case's prediction CSV (``submission.csv`` in the case's output folder)
against its solution (``CASE/solution.csv``), rows matched by id; it reports ``wrong``, the
share of solution rows whose answer is not the solution's (lower is better), and ``rows``.
``exact_column``: the same with the compared column named in the task's block
(``scorer: {exact_column: target}``). Nothing in ``proctor`` knows them: a distribution
declares ``exact_rows = toy_scorer:SCORER`` and ``exact_column = toy_scorer:KIND`` as entry
points of the group ``proctor.scorers``.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from proctor.errors import OutputError
from proctor.scoring.base import Scorer, ScorerKind, TaskScores
from proctor.spec.scorer import (
    ScorerDeclaration,
    ScorerSettings,
    count_metric,
    metric_declarations,
)
from proctor.types import Direction

METRICS = metric_declarations(
    ("wrong", Direction.LOWER, "share of rows with a wrong answer"),
    count_metric("rows", "rows scored"),
)


def _rows(path: Path, column: str) -> dict[str, str]:
    with path.open(newline="") as file:
        reader = csv.DictReader(file)
        if reader.fieldnames is None or not {"id", column} <= set(reader.fieldnames):
            raise OutputError(f"{path.name}: the header needs id and {column}")
        return {row["id"]: row[column] for row in reader}


def check_output(output: Path, column: str = "target") -> str | None:
    """None when the case's ``submission.csv`` has the id and answer columns."""
    path = output / "submission.csv" if output.is_dir() else output
    if not path.is_file():
        return "submission.csv: missing"
    try:
        _rows(path, column)
    except OutputError as err:
        return str(err)
    return None


def score_cases(
    outputs: Path, references: Path, cases: Sequence[str], template: str, column: str = "target"
) -> TaskScores:
    """The share of wrong rows over every case, and the rows scored."""
    wrong = total = 0
    for case in cases:
        truth = _rows(references / case / "solution.csv", column)
        output = outputs / template.format(record=case)
        given = _rows(output / "submission.csv" if output.is_dir() else output, column)
        wrong += sum(given.get(key) != answer for key, answer in truth.items())
        total += len(truth)
    return TaskScores({"wrong": wrong / total, "rows": float(total)})


def _declaration(name: str) -> ScorerDeclaration:
    return ScorerDeclaration(name, METRICS, "{record}/solution.csv", "toy: share of wrong rows")


SCORER = Scorer(_declaration("exact_rows"), score_cases, check_output)
"""The named scorer: ``scorer: exact_rows``."""


class ExactColumn(ScorerSettings):
    """``scorer: {exact_column: COLUMN}``: the column compared."""

    exact_column: str

    @property
    def declaration(self) -> ScorerDeclaration:
        """The toy's metrics: wrong rows (lower is better) and rows scored."""
        return _declaration("exact_column")


def _make(settings: ExactColumn, _runner: object, _check: object) -> Scorer:
    column = settings.exact_column

    def score(outputs: Path, references: Path, cases: Sequence[str], template: str) -> TaskScores:
        return score_cases(outputs, references, cases, template, column)

    return Scorer(settings.declaration, score, lambda output: check_output(output, column))


KIND = ScorerKind("exact_column", ExactColumn, _make, "toy: share of wrong rows in a column")
"""The scorer kind: ``scorer: {exact_column: target}``."""
