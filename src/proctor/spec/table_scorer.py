"""The ``table`` scorer's block: one metric of a Kaggle-style CSV prediction against a solution.

::

    scorer:
      table:
        metric: f1_macro          # one of proctor.types.TABLE_METRICS
        id: id                    # the id column of both files (default id)
        target: target            # the solution's answer column (default target)
        positive: "1"             # roc_auc / average_precision / log_loss: the positive class
        k: 5                      # map_at_k only: predictions counted per row
        solution: solution.csv    # in each case's reference folder (default solution.csv)
        prediction: submission.csv  # in each case's output folder (default submission.csv)

Each case's reference is ``CASE/<solution>`` in the references folder; its output is the
case's folder holding ``<prediction>`` (or the output file itself).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from proctor.spec.protocols import LocatedError, Strict
from proctor.spec.scorer import ScorerSettings, declare_scorer_kind
from proctor.types import (
    TABLE_METRICS,
    TABLE_SCORER,
    Direction,
    MetricDeclaration,
    ScorerDeclaration,
)

FileName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")]
ColumnName = Annotated[str, StringConstraints(min_length=1, max_length=200)]
ROWS_METRIC = MetricDeclaration("rows", Direction.NEUTRAL, "rows scored")
SCORE_METRICS = frozenset({"roc_auc", "average_precision", "log_loss"})
"""The metrics of scores or probabilities: the ones ``positive`` applies to."""


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
        if name not in TABLE_METRICS:
            raise ValueError(
                f"unknown table metric {name!r}: use one of {', '.join(sorted(TABLE_METRICS))}"
            )
        return name

    @field_validator("positive", mode="before")
    @classmethod
    def _label_text(cls, value: object) -> object:
        """YAML reads ``positive: 1`` as a number; a label is compared as text or number."""
        return str(value) if isinstance(value, int | float) else value

    @model_validator(mode="after")
    def _options_fit_the_metric(self) -> TableOptions:
        if self.metric == "map_at_k" and self.k is None:
            raise LocatedError("map_at_k needs k: the predictions counted per row", "k")
        if self.metric != "map_at_k" and self.k is not None:
            raise LocatedError(f"k applies to map_at_k only, not {self.metric}", "k")
        if self.positive is not None and self.metric not in SCORE_METRICS:
            raise LocatedError(
                f"positive applies to {', '.join(sorted(SCORE_METRICS))} only, not {self.metric}",
                "positive",
            )
        if self.id == self.target:
            raise LocatedError("the id and target columns must differ", "target")
        return self

    def declaration(self) -> ScorerDeclaration:
        """The scorer's metrics: the chosen one (with its direction) and the rows scored."""
        return ScorerDeclaration(
            name=TABLE_SCORER,
            summary=f"table: {self.metric} of a CSV prediction against its solution",
            reference=f"{{record}}/{self.solution}",
            metrics=(TABLE_METRICS[self.metric], ROWS_METRIC),
        )


class TableScorer(ScorerSettings):
    """``scorer: {table: {...}}``: the table scorer with its options."""

    table: TableOptions

    @property
    def declaration(self) -> ScorerDeclaration:
        """The chosen metric (with its direction) and the rows scored."""
        return self.table.declaration()


declare_scorer_kind(TABLE_SCORER, TableScorer)
