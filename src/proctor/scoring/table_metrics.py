"""One table metric of a prediction CSV against its solution CSV, rows matched by id.

The kinds of metric read the files differently:

- labels (accuracy, f1_macro, ...): the prediction's ``target`` column holds labels.
  Labels compare as numbers when every label of both files is a number (``1`` = ``1.0``),
  else as text.
- scores (roc_auc, average_precision, log_loss): one value column other than the id is the
  positive class's score (``positive``, default the greater solution label); several are
  per-class probabilities, each named after its class (every solution class needs one).
- values (rmse, mae, r2, mape, rmsle, pearson, spearman): the ``target`` column holds numbers.
- lists (map_at_k): the ``target`` columns hold space-separated items (relevant ones in the
  solution, ranked predictions in the prediction).

Every refusal is a ``TableFormatError`` naming the file; a metric's own refusal (a
probability above 1) names the prediction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from proctor.formats._numbers import parse_floats
from proctor.formats.table_arrow import MatchedTables, read_matched
from proctor.formats.table_csv import CsvTable, TableFormatError, match_rows, read_table
from proctor.metrics import tabular_classification as labels
from proctor.metrics import tabular_probabilities as scores
from proctor.metrics import tabular_regression as values
from proctor.metrics._validation import MetricInputError
from proctor.metrics.tabular_ranking import mean_average_precision_at_k
from proctor.spec.table_scorer import TableOptions

LabelMetric = Callable[[np.ndarray, np.ndarray], float]

LABEL_METRICS: dict[str, LabelMetric] = {
    "accuracy": labels.accuracy_score,
    "balanced_accuracy": labels.balanced_accuracy_score,
    "f1_macro": labels.f1_macro_score,
    "f1_micro": labels.f1_micro_score,
    "f1_weighted": labels.f1_weighted_score,
    "precision_macro": labels.precision_macro_score,
    "recall_macro": labels.recall_macro_score,
    "cohen_kappa": labels.cohen_kappa_score,
    "quadratic_weighted_kappa": labels.quadratic_weighted_kappa_score,
    "mcc": labels.matthews_corrcoef_score,
}
VALUE_METRICS: dict[str, LabelMetric] = {
    "rmse": values.root_mean_squared_error,
    "mae": values.mean_absolute_error,
    "r2": values.r2_score,
    "mape": values.mean_absolute_percentage_error,
    "rmsle": values.root_mean_squared_log_error,
    "pearson": values.pearson_correlation,
    "spearman": values.spearman_correlation,
}
SCORE_METRICS = ("roc_auc", "average_precision", "log_loss")
LIST_METRICS = ("map_at_k",)
KNOWN_METRICS = frozenset({*LABEL_METRICS, *VALUE_METRICS, *SCORE_METRICS, *LIST_METRICS})


@dataclass(frozen=True, slots=True)
class TableScore:
    """A metric's value over ``rows`` matched rows."""

    metric: str
    value: float
    rows: int


def score_table(solution: Path, prediction: Path, options: TableOptions) -> TableScore:
    """Read both files, match rows by id and compute ``options.metric``.

    Clean files take the fast path (:mod:`proctor.formats.table_arrow`); anything it does not
    take, and every problem, goes through the careful reader, which names the file and line.
    """
    matched = read_matched(solution, prediction, options.id)
    if matched is not None:
        fast = _fast_compute(matched, options)
        if fast is not None:
            return TableScore(options.metric, fast, matched.rows)
    truth = read_table(solution)
    given = read_table(prediction)
    truth.column(options.target, "target")
    order = match_rows(truth, given, options.id)
    try:
        value = _compute(truth, given, order, options)
    except TableFormatError:
        raise
    except MetricInputError as err:
        raise TableFormatError(prediction, 0, str(err)) from err
    return TableScore(options.metric, value, truth.rows)


def _ordered(fields: list[bytes], order: npt.NDArray[np.int64] | None) -> list[bytes]:
    return fields if order is None else [fields[i] for i in order.tolist()]


def _compute(
    truth: CsvTable, given: CsvTable, order: npt.NDArray[np.int64] | None, options: TableOptions
) -> float:
    metric = options.metric
    if metric in SCORE_METRICS:
        return _score_metric(truth, given, order, options)
    expected = truth.column(options.target, "target")
    predicted = _ordered(given.column(options.target, "target"), order)
    if metric in LABEL_METRICS:
        pair = _label_arrays(truth, expected, given, predicted)
        return LABEL_METRICS[metric](*pair)
    if metric in VALUE_METRICS:
        pair = truth.floats(options.target), given.floats(options.target, predicted)
        return VALUE_METRICS[metric](*pair)
    if options.k is None:
        raise ValueError("map_at_k needs k")
    return mean_average_precision_at_k(
        [_text(field).split() for field in expected],
        [_text(field).split() for field in predicted],
        k=options.k,
    )


def _fast_compute(matched: MatchedTables, options: TableOptions) -> float | None:
    """The metric of two tables the fast path read; None: let the careful path decide."""
    truth, given, order = matched.truth, matched.given, matched.order
    metric = options.metric
    try:
        if metric in LABEL_METRICS:
            expected = truth.codes(options.target)
            predicted = given.codes(options.target, order)
            if expected is None or predicted is None:
                return None
            (y_true, y_pred), _ = _labels_of([expected, predicted])
            return LABEL_METRICS[metric](y_true, y_pred)
        if metric in VALUE_METRICS:
            true_values = truth.floats(options.target)
            given_values = given.floats(options.target, order)
            if true_values is None or given_values is None:
                return None
            return VALUE_METRICS[metric](true_values, given_values)
        return _fast_binary_score(matched, options) if metric in SCORE_METRICS else None
    except (TableFormatError, MetricInputError):
        return None


def _fast_binary_score(matched: MatchedTables, options: TableOptions) -> float | None:
    """A score metric of a prediction with one score column, or None (any other layout)."""
    names = [name for name in matched.given.header if name != options.id]
    expected = matched.truth.codes(options.target)
    if len(names) != 1 or expected is None:
        return None
    scores_given = matched.given.floats(names[0], matched.order)
    if scores_given is None:
        return None
    keys, codes = expected
    (labels,), numeric = _labels_of([(keys, np.arange(len(keys)))])  # each distinct label once
    positive = _positive(np.unique(labels), numeric, options, matched.truth.path)
    return _binary(options.metric, (labels == positive)[codes], scores_given)


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
    truth: CsvTable, given: CsvTable, order: npt.NDArray[np.int64] | None, options: TableOptions
) -> float:
    y_true, numeric = _classes(truth, truth.column(options.target, "target"))
    classes = np.unique(y_true)
    names = [name for name in given.header if name != options.id]
    given.column(options.id, "id")
    if not names:
        raise given.error(None, "no score column besides the id: add the predicted scores")
    if len(names) == 1:
        positive = _positive(classes, numeric, options, truth.path)
        column = given.floats(names[0], _ordered(given.column(names[0], "target"), order))
        return _binary(options.metric, y_true == positive, column)
    return _multiclass(
        y_true, classes, given, numeric=numeric, names=names, order=order, options=options
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


def _binary(metric: str, positive: np.ndarray, column: np.ndarray) -> float:
    if metric == "roc_auc":
        return scores.roc_auc_ovr_score(positive, column)
    if metric == "average_precision":
        return scores.average_precision_macro_score(positive, column)
    return scores.log_loss(positive, column)


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
    *,
    numeric: bool,
    names: list[str],
    order: npt.NDArray[np.int64] | None,
    options: TableOptions,
) -> float:
    """Per-class probability columns, one per class, in sorted class order."""
    by_label = _columns_by_label(given, names, numeric)
    missing = [label for label in classes.tolist() if label not in by_label]
    if missing:
        shown = ", ".join(repr(str(label)) for label in missing[:5])
        raise given.error(
            None,
            f"no probability column for class {shown}: name one column after each class "
            f"({len(classes)} in the solution)",
        )
    labels_sorted = sorted(by_label)
    matrix = np.column_stack(
        [
            given.floats(by_label[label], _ordered(given.column(by_label[label], "id"), order))
            for label in labels_sorted
        ]
    )
    label_array = np.array(labels_sorted)
    if len(labels_sorted) == 2 and options.metric != "log_loss":
        positive = _positive(classes, numeric, options, given.path)
        column = matrix[:, labels_sorted.index(positive)] if positive in by_label else None
        if column is None:
            raise given.error(None, f"no column for the positive class {positive!r}")
        return _binary(options.metric, y_true == positive, column)
    if options.metric == "roc_auc":
        return scores.roc_auc_ovr_score(y_true, matrix, labels=label_array)
    if options.metric == "average_precision":
        return scores.average_precision_macro_score(y_true, matrix, labels=label_array)
    return scores.log_loss(y_true, matrix, labels=label_array)
