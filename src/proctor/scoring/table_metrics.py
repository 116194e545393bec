"""The table metrics: one catalog, and one metric of a prediction CSV against its solution CSV.

:data:`BUILTIN_TABLE_METRICS` is the one table of the metrics the ``table`` scorer offers (as
scikit-learn's ``_SCORERS``): each :class:`TableMetric` carries its name, its function (a pure
one of :mod:`proctor.metrics`), its kind, its direction and a one-line summary. A plug-in adds
one without touching Proctor: a distribution names a :class:`TableMetric` as an entry point of
the group :data:`PLUGIN_GROUP`, under the metric's name::

    [project.entry-points."proctor.table_metrics"]
    hits = "hits_metric:HITS"

The kind says how both files are read and how the function is called:

- labels (accuracy, f1_macro, ...): the prediction's ``target`` column holds labels.
  Labels compare as numbers when every label of both files is a number (``1`` = ``1.0``),
  else as text. ``function(y_true, y_pred)``. A prediction without a ``target`` column but
  with per-class probability columns (two or more, each named after its class, as a
  probabilities metric reads them) gives each row its most probable class; a tie goes to the
  first tied column of the file. So one file serves ``log_loss`` and ``f1_macro`` alike.
- scores (roc_auc, average_precision) and probabilities (log_loss): one value column other
  than the id is the positive class's score (``positive``, default the greater solution
  label); several (a ``target`` column beside them left out) are per-class probabilities,
  each named after its class (every solution class needs one).
  ``function(y_true, y_score, labels=None)``: ``labels`` the sorted classes of the columns.
  Of two class columns a scores metric reads the positive class's alone.
- values (rmse, mae, r2, mape, rmsle, pearson, spearman): the ``target`` column holds numbers.
  ``function(y_true, y_pred)``.
- lists (map_at_k): the ``target`` columns hold space-separated items (relevant ones in the
  solution, ranked predictions in the prediction). ``function(actual, predicted, k=k)``.

Every refusal is a ``TableFormatError`` naming the file; a metric's own refusal (a
probability above 1) names the prediction.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from proctor import plugins
from proctor.errors import ConfigError
from proctor.formats._numbers import parse_floats
from proctor.formats.table_arrow import MatchedTables, read_matched
from proctor.formats.table_csv import CsvTable, TableFormatError, match_rows, read_table
from proctor.metrics import tabular_classification as labels
from proctor.metrics import tabular_probabilities as scores
from proctor.metrics import tabular_regression as values
from proctor.metrics._validation import MetricInputError
from proctor.metrics.tabular_ranking import mean_average_precision_at_k
from proctor.spec.scorer import MetricDeclaration
from proctor.types import Direction

if TYPE_CHECKING:
    from proctor.scoring.table import TableOptions


class MetricKind(StrEnum):
    """How a table metric reads both files and is called (see the module docstring)."""

    LABELS = "labels"
    SCORES = "scores"
    PROBABILITIES = "probabilities"
    VALUES = "values"
    LISTS = "lists"


SCORED_KINDS = frozenset({MetricKind.SCORES, MetricKind.PROBABILITIES})
"""The kinds read from score or probability columns: the ones ``positive`` applies to."""


@dataclass(frozen=True, slots=True)
class TableMetric:
    """One metric of the ``table`` scorer: ``function`` called as its ``kind`` says."""

    name: str
    function: Callable[..., float]
    kind: MetricKind
    direction: Direction
    summary: str
    domain: tuple[float, float] | None = None

    @property
    def declaration(self) -> MetricDeclaration:
        """The metric as a scorer reports it: name, direction, summary and domain."""
        return MetricDeclaration(self.name, self.direction, self.summary, self.domain)


def _metric(
    name: str,
    function: Callable[..., float],
    kind: MetricKind,
    summary: str,
    *,
    lower: bool = False,
) -> TableMetric:
    direction = Direction.LOWER if lower else Direction.HIGHER
    return TableMetric(name, function, kind, direction, summary, DOMAINS.get(name))


_SHARE, _SIGNED, _POSITIVE = (0.0, 1.0), (-1.0, 1.0), (0.0, math.inf)
DOMAINS: dict[str, tuple[float, float]] = {
    **dict.fromkeys(
        (
            "accuracy", "balanced_accuracy", "f1_macro", "f1_micro", "f1_weighted",
            "precision_macro", "recall_macro", "roc_auc", "average_precision", "map_at_k",
        ),
        _SHARE,
    ),
    **dict.fromkeys(
        ("cohen_kappa", "quadratic_weighted_kappa", "mcc", "pearson", "spearman"), _SIGNED
    ),
    **dict.fromkeys(("log_loss", "rmse", "mae", "mape", "rmsle"), _POSITIVE),
    "r2": (-math.inf, 1.0),
}  # fmt: skip
"""The values each built-in table metric can take (its plots' axes stay inside)."""


_L, _S, _P = MetricKind.LABELS, MetricKind.SCORES, MetricKind.PROBABILITIES
_V, _R = MetricKind.VALUES, MetricKind.LISTS

BUILTIN_TABLE_METRICS: tuple[TableMetric, ...] = (
    _metric("accuracy", labels.accuracy_score, _L, "share of rows with the true label"),
    _metric(
        "balanced_accuracy", labels.balanced_accuracy_score, _L, "mean recall over the true classes"
    ),
    _metric("f1_macro", labels.f1_macro_score, _L, "unweighted mean of the classes' F1"),
    _metric("f1_micro", labels.f1_micro_score, _L, "F1 of the pooled counts"),
    _metric(
        "f1_weighted", labels.f1_weighted_score, _L, "mean of the classes' F1 weighted by support"
    ),
    _metric(
        "precision_macro",
        labels.precision_macro_score,
        _L,
        "unweighted mean of the classes' precision",
    ),
    _metric(
        "recall_macro", labels.recall_macro_score, _L, "unweighted mean of the classes' recall"
    ),
    _metric("cohen_kappa", labels.cohen_kappa_score, _L, "Cohen's kappa"),
    _metric(
        "quadratic_weighted_kappa",
        labels.quadratic_weighted_kappa_score,
        _L,
        "Cohen's kappa, quadratic weights",
    ),
    _metric("mcc", labels.matthews_corrcoef_score, _L, "Matthews correlation coefficient"),
    _metric(
        "roc_auc", scores.roc_auc_ovr_score, _S, "area under the ROC curve (one-vs-rest macro)"
    ),
    _metric(
        "average_precision",
        scores.average_precision_macro_score,
        _S,
        "average precision (macro over classes)",
    ),
    _metric(
        "log_loss",
        scores.log_loss,
        _P,
        "mean negative log-likelihood of the true class",
        lower=True,
    ),
    _metric("rmse", values.root_mean_squared_error, _V, "root mean squared error", lower=True),
    _metric("mae", values.mean_absolute_error, _V, "mean absolute error", lower=True),
    _metric("r2", values.r2_score, _V, "coefficient of determination"),
    _metric(
        "mape",
        values.mean_absolute_percentage_error,
        _V,
        "mean absolute percentage error (a fraction)",
        lower=True,
    ),
    _metric(
        "rmsle",
        values.root_mean_squared_log_error,
        _V,
        "root mean squared error of log(1 + value)",
        lower=True,
    ),
    _metric("pearson", values.pearson_correlation, _V, "Pearson's correlation coefficient"),
    _metric("spearman", values.spearman_correlation, _V, "Spearman's rank correlation"),
    _metric(
        "map_at_k", mean_average_precision_at_k, _R, "mean average precision at k of ranked lists"
    ),
)
"""The table metrics Proctor ships, in the order ``proctor score table --help`` lists them."""

PLUGIN_GROUP = "proctor.table_metrics"
"""The entry-point group through which an installed distribution adds table metrics."""


def _plugin_metric(entry: EntryPoint) -> TableMetric:
    metric = plugins.load(entry, "table metric")
    if not isinstance(metric, TableMetric):
        raise ConfigError(f"{plugins.where(entry)} must name a TableMetric")
    if metric.name != entry.name:
        raise ConfigError(
            f"{plugins.where(entry)} names a metric called {metric.name!r}: name it alike"
        )
    return metric


def table_metrics() -> Mapping[str, TableMetric]:
    """Every table metric by name: the built-in ones, then the installed plug-ins'.

    A plug-in cannot replace a built-in metric.
    """
    table = {metric.name: metric for metric in BUILTIN_TABLE_METRICS}
    for entry in plugins.declared(PLUGIN_GROUP):
        if entry.name not in table:
            table[entry.name] = _plugin_metric(entry)
    return table


@dataclass(frozen=True, slots=True)
class TableScore:
    """A metric's value over ``rows`` matched rows."""

    metric: str
    value: float
    rows: int


@dataclass(frozen=True, slots=True)
class TableScores:
    """Each metric's value (by name, in the options' order) over ``rows`` matched rows."""

    values: dict[str, float]
    rows: int


def score_table(solution: Path, prediction: Path, options: TableOptions) -> TableScore:
    """The first metric the options name (:func:`score_metrics`)."""
    scores = score_metrics(solution, prediction, options)
    name = options.metric_names[0]
    return TableScore(name, scores.values[name], scores.rows)


def score_metrics(solution: Path, prediction: Path, options: TableOptions) -> TableScores:
    """Read both files once, match rows by id and compute every metric the options name.

    Clean files take the fast path (:mod:`proctor.formats.table_arrow`); a metric it does not
    take, and every problem, goes through the careful reader, which names the file and line.
    With no metric named, the files are read and their ids matched only (an input check).
    """
    metrics = tuple(table_metrics()[name] for name in options.metric_names)
    values: dict[str, float] = {}
    matched = read_matched(solution, prediction, options.id)
    if matched is not None:
        for metric in metrics:
            fast = _fast_compute(matched, metric, options)
            if fast is not None:
                values[metric.name] = fast
        if len(values) == len(metrics):
            return TableScores(values, matched.rows)
    truth = read_table(solution)
    given = read_table(prediction)
    if metrics:
        truth.column(options.target, "target")
    order = match_rows(truth, given, options.id)
    for metric in metrics:
        if metric.name in values:
            continue
        try:
            values[metric.name] = _compute(truth, given, order, metric, options)
        except TableFormatError:
            raise
        except MetricInputError as err:
            raise TableFormatError(prediction, 0, str(err)) from err
    return TableScores({name: values[name] for name in options.metric_names}, truth.rows)


def _ordered(fields: list[bytes], order: npt.NDArray[np.int64] | None) -> list[bytes]:
    return fields if order is None else [fields[i] for i in order.tolist()]


def _compute(
    truth: CsvTable,
    given: CsvTable,
    order: npt.NDArray[np.int64] | None,
    metric: TableMetric,
    options: TableOptions,
) -> float:
    if metric.kind in SCORED_KINDS:
        return _score_metric(truth, given, order, metric, options)
    expected = truth.column(options.target, "target")
    if metric.kind is MetricKind.LABELS and _class_columns(given, options, least=2):
        return metric.function(*_most_probable(truth, expected, given, order, options))
    predicted = _ordered(given.column(options.target, "target"), order)
    if metric.kind is MetricKind.LABELS:
        return metric.function(*_label_arrays(truth, expected, given, predicted))
    if metric.kind is MetricKind.VALUES:
        return metric.function(
            truth.floats(options.target), given.floats(options.target, predicted)
        )
    if options.k is None:
        raise ValueError(f"{metric.name} needs k")
    return metric.function(
        [_text(field).split() for field in expected],
        [_text(field).split() for field in predicted],
        k=options.k,
    )


def _fast_compute(
    matched: MatchedTables, metric: TableMetric, options: TableOptions
) -> float | None:
    """The metric of two tables the fast path read; None: let the careful path decide."""
    truth, given, order = matched.truth, matched.given, matched.order
    try:
        if metric.kind is MetricKind.LABELS:
            expected = truth.codes(options.target)
            predicted = given.codes(options.target, order)
            if expected is None or predicted is None:
                return None
            (y_true, y_pred), _ = _labels_of([expected, predicted])
            return metric.function(y_true, y_pred)
        if metric.kind is MetricKind.VALUES:
            true_values = truth.floats(options.target)
            given_values = given.floats(options.target, order)
            if true_values is None or given_values is None:
                return None
            return metric.function(true_values, given_values)
        if metric.kind in SCORED_KINDS:
            return _fast_binary_score(matched, metric, options)
        return None
    except (TableFormatError, MetricInputError):
        return None


def _fast_binary_score(
    matched: MatchedTables, metric: TableMetric, options: TableOptions
) -> float | None:
    """A score metric of a prediction with one score column, or None (any other layout)."""
    names = [name for name in matched.given.header if name != options.id]
    if options.target in names and len(names) > 1:
        names.remove(options.target)  # the labels beside the scores
    expected = matched.truth.codes(options.target)
    if len(names) != 1 or expected is None:
        return None
    scores_given = matched.given.floats(names[0], matched.order)
    if scores_given is None:
        return None
    keys, codes = expected
    (labels,), numeric = _labels_of([(keys, np.arange(len(keys)))])  # each distinct label once
    positive = _positive(np.unique(labels), numeric, options, matched.truth.path)
    return float(metric.function((labels == positive)[codes], scores_given))


def _class_columns(given: CsvTable, options: TableOptions, *, least: int = 1) -> list[str]:
    """The prediction's columns of per-class scores: all but the id (and the target, if any).

    Empty when the file has fewer than ``least`` such columns, or (``least`` above 1, as a
    labels metric asks) a target column to read its labels from. A target column that is the
    only other column is a one-column score (``id,target`` for ``roc_auc``).
    """
    names = [name for name in given.header if name != options.id]
    if options.target in names and len(names) > 1:
        if least > 1:
            return []
        names.remove(options.target)
    return names if len(names) >= least else []


def _most_probable(
    truth: CsvTable,
    expected: list[bytes],
    given: CsvTable,
    order: npt.NDArray[np.int64] | None,
    options: TableOptions,
) -> tuple[np.ndarray, np.ndarray]:
    """True labels, and each row's most probable class of the per-class probability columns.

    A tie goes to the first of the tied columns in the file's order (as ``numpy.argmax``).
    Every class of the solution needs its column, as for a probabilities metric.
    """
    y_true, numeric = _classes(truth, expected)
    names = _class_columns(given, options, least=2)
    by_label = _columns_by_label(given, names, numeric)
    _require_every_class(given, np.unique(y_true), by_label)
    matrix = np.column_stack(
        [given.floats(name, _ordered(given.column(name, "id"), order)) for name in names]
    )
    labels = np.array(list(by_label))  # the columns' classes, in the file's order
    return y_true, labels[np.argmax(matrix, axis=1)]


def _require_every_class(
    given: CsvTable, classes: np.ndarray, by_label: dict[float | str, str]
) -> None:
    """Refuse per-class columns that leave out a class of the solution."""
    missing = [label for label in classes.tolist() if label not in by_label]
    if missing:
        shown = ", ".join(repr(str(label)) for label in missing[:5])
        raise given.error(
            None,
            f"no probability column for class {shown}: name one column after each class "
            f"({len(classes)} in the solution)",
        )


def _text(field: bytes) -> str:
    return field.decode("utf-8", errors="replace")


def _label_arrays(
    truth_table: CsvTable, expected: list[bytes], given: CsvTable, predicted: list[bytes]
) -> tuple[np.ndarray, np.ndarray]:
    """Both label columns as numbers when every label is a finite number, else as text."""
    (truth, pred), _ = _labels([expected, predicted])
    return truth, pred


def _classes(truth: CsvTable, expected: list[bytes]) -> tuple[np.ndarray, bool]:
    """The solution's labels (numbers when all are) and whether they are numbers."""
    (labels,), numeric = _labels([expected])
    return labels, numeric


def _labels(columns: list[list[bytes]]) -> tuple[list[np.ndarray], bool]:
    """Label columns as numbers when every distinct label is a finite number, else as text.

    Each distinct label is read once (a label column holds few), so a million rows cost two
    dictionary passes rather than a million ``float()`` calls.
    """
    distinct = [list(dict.fromkeys(fields)) for fields in columns]
    codes = [
        np.fromiter(map({key: i for i, key in enumerate(keys)}.__getitem__, fields), np.int64)
        for keys, fields in zip(distinct, columns, strict=True)
    ]
    return _labels_of(list(zip(distinct, codes, strict=True)))


def _labels_of(
    coded: list[tuple[list[bytes], npt.NDArray[np.int64]]],
) -> tuple[list[np.ndarray], bool]:
    """Columns given as (distinct fields, each row's index among them), as :func:`_labels`."""
    distinct = [keys for keys, _ in coded]
    codes = [code for _, code in coded]
    numbers = [parse_floats(keys) for keys in distinct]
    if all(bad is None and np.isfinite(values).all() for values, bad in numbers):
        return [values[code] for (values, _), code in zip(numbers, codes, strict=True)], True
    texts = [np.array([_text(key) for key in keys]) for keys in distinct]
    return [text[code] for text, code in zip(texts, codes, strict=True)], False


def _label_of(text: str, numeric: bool) -> float | str:
    """A class name as the solution's labels are: a number when they are numbers."""
    return float(text) if numeric else text


def _score_metric(
    truth: CsvTable,
    given: CsvTable,
    order: npt.NDArray[np.int64] | None,
    metric: TableMetric,
    options: TableOptions,
) -> float:
    y_true, numeric = _classes(truth, truth.column(options.target, "target"))
    classes = np.unique(y_true)
    names = _class_columns(given, options)
    given.column(options.id, "id")
    if not names:
        raise given.error(None, "no score column besides the id: add the predicted scores")
    if len(names) == 1:
        positive = _positive(classes, numeric, options, truth.path)
        column = given.floats(names[0], _ordered(given.column(names[0], "target"), order))
        return float(metric.function(y_true == positive, column))
    return _multiclass(
        y_true, classes, given, metric, numeric=numeric, names=names, order=order, options=options
    )


def _positive(classes: np.ndarray, numeric: bool, options: TableOptions, path: Path) -> float | str:
    """The positive class: ``options.positive``, else the greater of two; refusals name ``path``."""
    if options.positive is None:
        if classes.size > 2:
            raise TableFormatError(
                path,
                0,
                f"the solution holds {classes.size} classes: a prediction with one score "
                "column needs two (or one column per class, named after it)",
            )
        top: float | str = classes[-1].item()
        return top
    try:
        positive = _label_of(options.positive, numeric)
    except ValueError:
        positive = options.positive
    if positive not in classes.tolist():
        shown = ", ".join(str(label) for label in classes.tolist()[:10])
        raise TableFormatError(
            path,
            0,
            f"the positive label {options.positive!r} is not a label of the solution ({shown}): "
            "set positive to one of them",
        )
    return positive


def _columns_by_label(given: CsvTable, names: list[str], numeric: bool) -> dict[float | str, str]:
    found: dict[float | str, str] = {}
    for name in names:
        try:
            label = _label_of(name, numeric)
        except ValueError:
            raise given.error(
                None, f"column {name!r} is not a class of the solution (its classes are numbers)"
            ) from None
        if label in found:
            raise given.error(None, f"columns {found[label]!r} and {name!r} name one class")
        found[label] = name
    return found


def _multiclass(
    y_true: np.ndarray,
    classes: np.ndarray,
    given: CsvTable,
    metric: TableMetric,
    *,
    numeric: bool,
    names: list[str],
    order: npt.NDArray[np.int64] | None,
    options: TableOptions,
) -> float:
    """Per-class probability columns, one per class, in sorted class order."""
    by_label = _columns_by_label(given, names, numeric)
    _require_every_class(given, classes, by_label)
    labels_sorted = sorted(by_label)
    matrix = np.column_stack(
        [
            given.floats(by_label[label], _ordered(given.column(by_label[label], "id"), order))
            for label in labels_sorted
        ]
    )
    label_array = np.array(labels_sorted)
    if len(labels_sorted) == 2 and metric.kind is MetricKind.SCORES:
        positive = _positive(classes, numeric, options, given.path)
        column = matrix[:, labels_sorted.index(positive)] if positive in by_label else None
        if column is None:
            raise given.error(None, f"no column for the positive class {positive!r}")
        return float(metric.function(y_true == positive, column))
    return float(metric.function(y_true, matrix, labels=label_array))
