"""The ``table`` scorer: metrics of each case's prediction CSV against its solution CSV.

::

    scorer:
      table:
        metrics: [log_loss, f1_macro]  # table metrics (scoring.table_metrics); or metric: NAME
        id: id                    # the id column of both files (default id)
        target: target            # the solution's answer column (default target)
        positive: "1"             # a scores or probabilities metric: the positive class
        k: 5                      # a lists metric (map_at_k) only: predictions counted per row
        solution: solution.csv    # in each case's reference folder (default solution.csv)
        prediction: submission.csv  # in each case's output folder (default submission.csv)

A case's reference is ``references/CASE/<solution>``; its output is the case's folder holding
``<prediction>`` (the ``predictions`` protocol's upload: ``test/CASE/submission.csv``), or
the output file itself. Each metric's summary is its mean over the task's cases (one, for a
predictions task); ``rows`` counts the rows scored. One prediction file serves every metric:
with per-class probability columns and no ``target`` column, a labels metric takes each row's
most probable class (:mod:`proctor.scoring.table_metrics`).

The same block is a scoring program's input check (``check: table``, :func:`table_check`):
each output must read as the table these options describe, and before the program runs each
case's prediction is matched with its solution (and, with metrics named, read as they read
it), so a malformed upload is the entry's failure with the table's message.

Whose fault: a prediction that cannot be read, or whose ids do not match the solution's
(missing, repeated, unknown), is the entry's (:class:`proctor.errors.OutputError`, the
message naming the file from the case folder and the line); a solution that cannot be read
is the organizer's (any other error: the score stage fails with ``E-SCORE``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import Field, StringConstraints, field_validator, model_validator

from proctor.errors import OutputError
from proctor.formats.table_arrow import read_clean
from proctor.formats.table_csv import TableFormatError, read_table
from proctor.scoring.base import CheckKind, InputCheck, Scorer, ScorerKind, TaskScores
from proctor.scoring.table_metrics import (
    SCORED_KINDS,
    MetricKind,
    TableMetric,
    TableScores,
    score_metrics,
    table_metrics,
)
from proctor.spec.protocols import LocatedError
from proctor.spec.scorer import (
    OutputCheckSettings,
    ScorerDeclaration,
    ScorerSettings,
    count_metric,
)

TABLE_SCORER = "table"
"""The scorer kind with options (``scorer: {table: {metrics: [...]}}``): metrics of a CSV."""

FileName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")]
ColumnName = Annotated[str, StringConstraints(min_length=1, max_length=200)]
ROWS_METRIC = count_metric("rows", "rows scored")


def _names_of(kinds: frozenset[MetricKind]) -> str:
    return ", ".join(sorted(m.name for m in table_metrics().values() if m.kind in kinds))


class TableOptions(OutputCheckSettings):
    """Which metrics, which columns, which files: see the module docstring.

    ``metric: NAME`` is ``metrics: [NAME]``. A ``table:`` scorer names at least one metric
    (:class:`TableScorer`); a scoring program's ``check: table`` may name none, and then
    checks the file's layout and ids only.
    """

    metric: str | None = None
    metrics: tuple[str, ...] = ()
    id: ColumnName = "id"
    target: ColumnName = "target"
    positive: str | None = None
    k: int | None = Field(default=None, ge=1, strict=True)
    solution: FileName = "solution.csv"
    prediction: FileName = "submission.csv"

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, name: str | None) -> str | None:
        return None if name is None else _known(name)

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            _known(name)
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"{', '.join(repeated)} listed twice: name each metric once")
        return names

    @field_validator("positive", mode="before")
    @classmethod
    def _label_text(cls, value: object) -> object:
        """YAML reads ``positive: 1`` as a number; a label is compared as text or number."""
        return str(value) if isinstance(value, int | float) else value

    @model_validator(mode="after")
    def _options_fit_the_metrics(self) -> TableOptions:
        if self.metric is not None and self.metrics:
            raise LocatedError("give metric or metrics, not both", "metrics")
        kinds = {metric.kind for metric in self.table_metrics}
        named = ", ".join(self.metric_names) or "no metric"
        lists = [m.name for m in self.table_metrics if m.kind is MetricKind.LISTS]
        if lists and self.k is None:
            raise LocatedError(f"{lists[0]} needs k: the predictions counted per row", "k")
        if MetricKind.LISTS not in kinds and self.k is not None:
            names = _names_of(frozenset({MetricKind.LISTS}))
            raise LocatedError(f"k applies to {names} only, not {named}", "k")
        if self.positive is not None and not kinds & SCORED_KINDS:
            raise LocatedError(
                f"positive applies to {_names_of(SCORED_KINDS)} only, not {named}", "positive"
            )
        if self.id == self.target:
            raise LocatedError("the id and target columns must differ", "target")
        return self

    @property
    def metric_names(self) -> tuple[str, ...]:
        """The metrics named, in report order (``metric: NAME`` is one)."""
        return self.metrics if self.metric is None else (self.metric,)

    @property
    def table_metrics(self) -> tuple[TableMetric, ...]:
        """The catalog's entries of the metrics named, in report order."""
        known = table_metrics()
        return tuple(known[name] for name in self.metric_names)

    @property
    def reference(self) -> str:
        """Each case's solution, ``{record}/solution.csv``: a check reads it too."""
        return f"{{record}}/{self.solution}"

    def declaration(self) -> ScorerDeclaration:
        """The scorer's metrics: the chosen ones (with their directions) and the rows scored."""
        return ScorerDeclaration(
            name=TABLE_SCORER,
            summary=f"table: {', '.join(self.metric_names)} of a CSV prediction against its "
            "solution",
            reference=self.reference,
            metrics=(*(metric.declaration for metric in self.table_metrics), ROWS_METRIC),
            cases=ROWS_METRIC.name,
        )


def _known(name: str) -> str:
    known = table_metrics()
    if name not in known:
        raise ValueError(f"unknown table metric {name!r}: use one of {', '.join(sorted(known))}")
    return name


class TableScorer(ScorerSettings):
    """``scorer: {table: {...}}``: the table scorer with its options (one metric at least)."""

    table: TableOptions

    @model_validator(mode="after")
    def _some_metric(self) -> TableScorer:
        if not self.table.metric_names:
            raise LocatedError(
                "name the metrics to score: metrics: [NAME, ...] (or metric: NAME)", "table"
            )
        return self

    @property
    def declaration(self) -> ScorerDeclaration:
        """The chosen metrics (with their directions) and the rows scored."""
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


KIND = ScorerKind(TABLE_SCORER, TableScorer, _make, "metrics of a CSV prediction, by id")
"""The ``table`` scorer kind: ``scorer: {table: {metrics: [NAME, ...], ...}}``."""


def prediction_file(options: TableOptions, output: Path) -> Path:
    """The prediction CSV of one case's output: the folder's ``prediction`` file, or itself."""
    return output / options.prediction if output.is_dir() else output


def _shown(err: TableFormatError, name: str) -> str:
    """The refusal naming the file by ``name`` (never a host path)."""
    line = f", line {err.line}" if err.line else ""
    return f"{name}{line}: {err.problem}"


def check_prediction(options: TableOptions, output: Path) -> str | None:
    """None when the case's prediction reads as a table with the columns its metrics read."""
    path = prediction_file(options, output)
    name = path.name
    if not path.is_file():
        return f"{name}: missing: write the predictions as {options.prediction} (id,...)"
    clean = read_clean(path)  # the fast reader: a clean file needs no second look
    if (
        clean is not None
        and options.id in clean.header
        and not _lacks_target(options, clean.header)
    ):
        return None
    try:
        table = read_table(path)
        table.column(options.id, "id")
        if _lacks_target(options, table.header):
            table.column(options.target, "target")
    except TableFormatError as err:
        return _shown(err, name)
    return None


def _lacks_target(options: TableOptions, header: Sequence[str]) -> bool:
    """True when a metric named needs the target column and the header has none.

    Values and lists are read from it; labels from it, or else from two or more per-class
    probability columns (the most probable class); scores never need it.
    """
    if options.target in header:
        return False
    kinds = {metric.kind for metric in options.table_metrics}
    if kinds & {MetricKind.VALUES, MetricKind.LISTS}:
        return True
    classes = [column for column in header if column != options.id]
    return MetricKind.LABELS in kinds and len(classes) < 2


def score_cases(
    options: TableOptions,
    outputs: Path,
    references: Path,
    cases: Sequence[str],
    output_template: str,
) -> TaskScores:
    """Every metric of every case, their means as the task's summary, and the rows scored."""
    per_case: dict[str, dict[str, float]] = {}
    rows = 0
    for case in cases:
        solution = _solution(options, references, case)
        prediction = prediction_file(options, outputs / output_template.format(record=case))
        result = _score_case(options, solution, prediction)
        per_case[case] = {**result.values, "rows": float(result.rows)}
        rows += result.rows
    summary = {
        name: float(np.mean([row[name] for row in per_case.values()])) if per_case else math.nan
        for name in options.metric_names
    }
    return TaskScores({**summary, "rows": float(rows)}, per_case)


def _solution(options: TableOptions, references: Path, case: str) -> Path:
    solution = references / case / options.solution
    if not solution.is_file():
        raise FileNotFoundError(f"the hidden reference {case}/{options.solution} is missing")
    return solution


def _score_case(options: TableOptions, solution: Path, prediction: Path) -> TableScores:
    try:
        return score_metrics(solution, prediction, options)
    except TableFormatError as err:
        if err.path != prediction:
            raise
        raise OutputError(_shown(err, prediction.name)) from err


def check_against_solutions(
    options: TableOptions,
    outputs: Path,
    references: Path,
    cases: Sequence[str],
    output_template: str,
) -> None:
    """Refuse, as the entry's fault, a prediction the table would refuse against its solution.

    The check a scoring program's ``check: table`` runs before the program: each case's
    prediction (a case without one is the program's to score) is matched with its solution
    by id and, with metrics named, read as they read it. ``OutputError`` names the file and
    line; a missing or unreadable solution is the organizer's (any other error).
    """
    for case in cases:
        prediction = prediction_file(options, outputs / output_template.format(record=case))
        if prediction.is_file():
            _score_case(options, _solution(options, references, case), prediction)


def table_check(options: TableOptions) -> InputCheck:
    """The table's checks as a scoring program's ``check: table``: per output, then per task."""

    def before_scoring(
        outputs: Path, references: Path, cases: Sequence[str], output_template: str
    ) -> None:
        check_against_solutions(options, outputs, references, cases, output_template)

    def check(output: Path) -> str | None:
        return check_prediction(options, output)

    return InputCheck(check, before_scoring)


def _make_check(settings: Any) -> InputCheck:
    return table_check(settings)


CHECK = CheckKind(TABLE_SCORER, TableOptions, _make_check)
"""``check: table`` of a scoring program, with its ``table:`` block (:class:`TableOptions`)."""
