"""The ``table`` scorer: one metric of each case's prediction CSV against its solution CSV.

::

    scorer:
      table:
        metric: f1_macro          # one of the table metrics (scoring.table_metrics)
        id: id                    # the id column of both files (default id)
        target: target            # the solution's answer column (default target)
        positive: "1"             # a scores or probabilities metric: the positive class
        k: 5                      # a lists metric (map_at_k) only: predictions counted per row
        solution: solution.csv    # in each case's reference folder (default solution.csv)
        prediction: submission.csv  # in each case's output folder (default submission.csv)

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
from typing import Annotated, Any

import numpy as np
from pydantic import Field, StringConstraints, field_validator, model_validator

from proctor.errors import OutputError
from proctor.formats.table_arrow import read_clean
from proctor.formats.table_csv import TableFormatError, read_table
from proctor.scoring.base import Scorer, ScorerKind, TaskScores
from proctor.scoring.table_metrics import (
    SCORED_KINDS,
    MetricKind,
    TableMetric,
    TableScore,
    score_table,
    table_metrics,
)
from proctor.spec.protocols import LocatedError, Strict
from proctor.spec.scorer import ScorerDeclaration, ScorerSettings, count_metric

TABLE_SCORER = "table"
"""The scorer kind with options (``scorer: {table: {metric: ...}}``): one metric of a CSV."""

FileName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")]
ColumnName = Annotated[str, StringConstraints(min_length=1, max_length=200)]
ROWS_METRIC = count_metric("rows", "rows scored")


def _names_of(kinds: frozenset[MetricKind]) -> str:
    return ", ".join(sorted(m.name for m in table_metrics().values() if m.kind in kinds))


class TableOptions(Strict):
    """Which metric, which columns, which files: see the module docstring."""

    metric: str
    id: ColumnName = "id"
    target: ColumnName = "target"
    positive: str | None = None
    k: int | None = Field(default=None, ge=1, strict=True)
    solution: FileName = "solution.csv"
    prediction: FileName = "submission.csv"

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, name: str) -> str:
        known = table_metrics()
        if name not in known:
            raise ValueError(
                f"unknown table metric {name!r}: use one of {', '.join(sorted(known))}"
            )
        return name

    @field_validator("positive", mode="before")
    @classmethod
    def _label_text(cls, value: object) -> object:
        """YAML reads ``positive: 1`` as a number; a label is compared as text or number."""
        return str(value) if isinstance(value, int | float) else value

    @model_validator(mode="after")
    def _options_fit_the_metric(self) -> TableOptions:
        kind = self.table_metric.kind
        if kind is MetricKind.LISTS and self.k is None:
            raise LocatedError(f"{self.metric} needs k: the predictions counted per row", "k")
        if kind is not MetricKind.LISTS and self.k is not None:
            lists = _names_of(frozenset({MetricKind.LISTS}))
            raise LocatedError(f"k applies to {lists} only, not {self.metric}", "k")
        if self.positive is not None and kind not in SCORED_KINDS:
            raise LocatedError(
                f"positive applies to {_names_of(SCORED_KINDS)} only, not {self.metric}",
                "positive",
            )
        if self.id == self.target:
            raise LocatedError("the id and target columns must differ", "target")
        return self

    @property
    def table_metric(self) -> TableMetric:
        """The catalog's entry of the chosen metric."""
        return table_metrics()[self.metric]

    def declaration(self) -> ScorerDeclaration:
        """The scorer's metrics: the chosen one (with its direction) and the rows scored."""
        return ScorerDeclaration(
            name=TABLE_SCORER,
            summary=f"table: {self.metric} of a CSV prediction against its solution",
            reference=f"{{record}}/{self.solution}",
            metrics=(self.table_metric.declaration, ROWS_METRIC),
            cases=ROWS_METRIC.name,
        )


class TableScorer(ScorerSettings):
    """``scorer: {table: {...}}``: the table scorer with its options."""

    table: TableOptions

    @property
    def declaration(self) -> ScorerDeclaration:
        """The chosen metric (with its direction) and the rows scored."""
        return self.table.declaration()


def table_scorer(options: TableOptions) -> Scorer:
    """The scorer of a task's ``scorer: {table: ...}`` block."""

    def score(
        outputs: Path, references: Path, cases: Sequence[str], output_template: str
    ) -> TaskScores:
        return score_cases(options, outputs, references, cases, output_template)

    def check(output: Path) -> str | None:
        return check_prediction(options, output)

    return Scorer(options.declaration(), score, check)


def _make(settings: Any, _runner: object, _check: object) -> Scorer:
    return table_scorer(settings.table)


KIND = ScorerKind(TABLE_SCORER, TableScorer, _make, "one metric of a CSV prediction, by id")
"""The ``table`` scorer kind: ``scorer: {table: {metric: NAME, ...}}``."""


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
    needs_target = options.table_metric.kind not in SCORED_KINDS
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
