"""A test-side registry of Proctor's metrics: name → function, direction, input kind, bounds.

Only the tests use it: one parametrised test (``tests/metrics/test_metrics_registry.py``) checks the
invariants of every entry, as scikit-learn's ``test_common.py`` does for its metrics.

``REGISTRY`` is a read-only mapping built on first use, so importing this module imports no
metric module; :func:`get_metric` looks one up with an error that lists the known names.

Names follow the scikit-learn convention: ``*_score`` is higher-is-better; ``*_distance``,
``*_loss``, ``*_error`` and ``*_rank`` are lower-is-better. Every metric is called as its input
kind says (:data:`INPUT_KINDS`); a metric whose own signature differs gets an adapter here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, get_args

from proctor.metrics._validation import MetricInputError

Direction = Literal["higher", "lower"]
InputKind = Literal[
    "binary_scores", "probabilities", "labels", "segmentation", "annotated_sentences", "ranks"
]

INPUT_KINDS: Mapping[InputKind, str] = {
    "binary_scores": (
        "func(y_true, y_score) -> float: y_true 1-D of 0/1 (1 positive), y_score 1-D real scores, "
        "larger = more likely positive. Undefined: y_true holds a single class."
    ),
    "probabilities": (
        "func(y_true, y_prob) -> float: y_true 1-D of 0/1, y_prob 1-D probabilities of the "
        "positive class in [0, 1]. Undefined: y_true holds a single class."
    ),
    "labels": (
        "func(y_true, y_pred) -> float: 1-D arrays of class labels, one per case; y_true takes "
        "the entry's `classes`, y_pred also its `extra_pred_classes`. Undefined: y_true and "
        "y_pred equal and of a single class."
    ),
    "segmentation": (
        "func(truth, segmentation) -> float: two 3-D arrays of the same shape, 0 background / "
        "1 foreground (fuzzy values in [0, 1] allowed). Undefined: both volumes empty."
    ),
    "annotated_sentences": (
        "func(gold, submitted) -> float: two sequences of proctor.metrics.extraction.Sentence, "
        "paired by position. Undefined: nothing annotated on either side."
    ),
    "ranks": (
        "func(scores) -> one value per participant: a participants × tasks table of scores, "
        "higher is better, NaN = missing result (ranks worst). Never undefined."
    ),
}
"""How a metric of each input kind is called, and which input is its *undefined* case."""


@dataclass(frozen=True)
class MetricInfo:
    """One registered metric.

    ``bounds`` is the closed range every value lies in (``None``: no fixed range, e.g. ranks
    whose range depends on the number of participants). ``symmetric``: swapping the two inputs
    leaves the value unchanged. ``order_free``: reordering the cases (all inputs alike) leaves
    the value unchanged (false for spatial segmentation metrics). ``undefined_value`` is what the
    metric returns on its input kind's undefined case: NaN (with a warning) by default, a number
    when the reference implementation documents one, ``None`` when the metric is defined there.
    For the ``labels`` kind, ``classes`` are the labels of ``y_true`` and ``extra_pred_classes``
    the further labels ``y_pred`` may take (PhysioNet 2016's "0", unsure).
    """

    name: str
    func: Callable[..., Any]
    direction: Direction
    input_kind: InputKind
    bounds: tuple[float, float] | None
    symmetric: bool
    description: str
    order_free: bool = True
    undefined_value: float | None = math.nan
    classes: tuple[str, ...] = ()
    extra_pred_classes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.direction not in get_args(Direction):
            raise MetricInputError(f"{self.name}: direction must be 'higher' or 'lower'")
        if self.input_kind not in INPUT_KINDS:
            raise MetricInputError(
                f"{self.name}: unknown input kind {self.input_kind!r}; known: "
                + ", ".join(INPUT_KINDS)
            )
        if (self.input_kind == "labels") != bool(self.classes):
            raise MetricInputError(f"{self.name}: classes are given exactly for the labels kind")
        if self.bounds is not None and not self.bounds[0] <= self.bounds[1]:
            raise MetricInputError(f"{self.name}: bounds {self.bounds} are not (low, high)")

    @property
    def higher_is_better(self) -> bool:
        """Whether a larger value is a better result (for sorting leaderboards)."""
        return self.direction == "higher"


class UnknownMetricError(MetricInputError, KeyError):
    """A metric name that is not in the registry; the message lists the known names."""

    def __str__(self) -> str:
        return str(self.args[0])


def _ranking_entries() -> list[MetricInfo]:
    """The rank aggregations of :mod:`proctor.metrics.ranking` over a participants × tasks table."""
    from proctor.metrics import ranking

    def entry(name: str, func: Callable[..., Any], direction: Direction, text: str) -> MetricInfo:
        return MetricInfo(name, func, direction, "ranks", None, False, text, undefined_value=None)

    return [
        entry("mean_rank", ranking.mean_rank, "lower", "Mean of per-task ranks (ChaLearn AutoML)."),
        entry("median_rank", ranking.median_rank, "lower", "Median of per-task ranks."),
        entry("borda_count", ranking.borda_count, "higher", "Participants beaten, summed."),
    ]


def _classification_entries() -> list[MetricInfo]:
    """ROC AUC and the calibration metrics of :mod:`proctor.metrics.classification`."""
    from proctor.metrics import classification as c

    unit = (0.0, 1.0)
    return [
        MetricInfo(
            "roc_auc_score", c.roc_auc_score, "higher", "binary_scores", unit, False,
            "Area under the ROC curve (scikit-learn's binary roc_auc_score; AutoWSL).",
        ),
        MetricInfo(
            "brier_score_loss", c.brier_score_loss, "lower", "probabilities", unit, False,
            "Mean squared error of the positive-class probability.", undefined_value=None,
        ),
        MetricInfo(
            "expected_calibration_error", c.expected_calibration_error, "lower",
            "probabilities", unit, False,
            "Expected calibration error over 10 equal-width probability bins.",
            undefined_value=None,
        ),
    ]  # fmt: skip


def _tabular_entries() -> list[MetricInfo]:
    """A sample of the ``table`` scorer's metrics (:mod:`proctor.metrics.tabular_*`)."""
    from proctor.metrics import tabular_classification as t
    from proctor.metrics import tabular_probabilities as p

    unit, classes = (0.0, 1.0), ("a", "b", "c")
    return [
        MetricInfo(
            "accuracy_score", t.accuracy_score, "higher", "labels", unit, True,
            "Share of rows with the true label (table scorer).", undefined_value=None,
            classes=classes,
        ),
        MetricInfo(
            "f1_macro_score", t.f1_macro_score, "higher", "labels", unit, True,
            "Unweighted mean of the classes' F1 (table scorer).", undefined_value=None,
            classes=classes,
        ),
        MetricInfo(
            "matthews_corrcoef_score", t.matthews_corrcoef_score, "higher", "labels",
            (-1.0, 1.0), True, "Matthews correlation, multiclass; 0 for one class (table).",
            undefined_value=0.0, classes=classes,
        ),
        MetricInfo(
            "roc_auc_ovr_score", p.roc_auc_ovr_score, "higher", "binary_scores", unit, False,
            "ROC AUC of the table scorer (binary here; one-vs-rest macro with columns).",
        ),
    ]  # fmt: skip


@dataclass(frozen=True)
class _ArousalScore:
    """PhysioNet 2018 AUPRC (``index`` 0) or AUROC (1) as ``func(y_true, y_prob)``."""

    index: int

    def __call__(self, y_true: Any, y_prob: Any) -> float:
        from proctor.metrics.physionet2018 import record_auprc_auroc

        return record_auprc_auroc(y_prob, y_true)[self.index]


def _physionet2018_entries() -> list[MetricInfo]:
    """Gross AUPRC/AUROC of the PhysioNet 2018 scorer (one record, or records concatenated)."""
    text = "PhysioNet 2018 {} over 1001 probability bins, as score2018.py (gross over records)."
    return [
        MetricInfo(
            f"physionet2018_{name}_score", _ArousalScore(index), "higher", "probabilities",
            (0.0, 1.0), False, text.format(name.upper()),
        )
        for index, name in enumerate(("auprc", "auroc"))
    ]  # fmt: skip


@dataclass(frozen=True)
class _AnswerScore:
    """A PhysioNet 2015/16/17 score as ``func(y_true, y_pred)``: case ``i`` is record ``"i"``."""

    year: int

    def __call__(self, y_true: Any, y_pred: Any) -> float:
        from proctor.metrics import physionet_scores

        truth, pred = list(y_true), list(y_pred)
        if len(truth) != len(pred):
            raise MetricInputError(f"y_true has {len(truth)} labels but y_pred {len(pred)}")
        reference = {str(i): str(label) for i, label in enumerate(truth)}
        answers = {str(i): str(label) for i, label in enumerate(pred)}
        result = getattr(physionet_scores, f"score_{self.year}")(reference, answers)
        return float(result.macc if self.year == 2016 else result.score)


def _physionet_answer_entries() -> list[MetricInfo]:
    """The PhysioNet 2015 (false alarms), 2016 (heart sounds) and 2017 (AF) challenge scores."""
    from proctor.metrics import physionet_scores as p

    unit = (0.0, 1.0)
    return [
        MetricInfo(
            "physionet2015_score", _AnswerScore(2015), "higher", "labels", unit, False,
            "PhysioNet 2015 false-alarm score (TP+TN)/(TP+TN+FP+5·FN); 1 = true alarm.",
            undefined_value=None, classes=p.LABELS_2015,
        ),
        MetricInfo(
            "physionet2016_macc_score", _AnswerScore(2016), "higher", "labels", unit, False,
            "PhysioNet 2016 MAcc = (Se+Sp)/2; 1 abnormal, -1 normal, 0 unsure counts half.",
            classes=("-1", "1"), extra_pred_classes=("0",),
        ),
        MetricInfo(
            "physionet2017_f1_score", _AnswerScore(2017), "higher", "labels", unit, True,
            "PhysioNet 2017 mean F1 of classes N, A, O (noise ~ not averaged).",
            classes=p.LABELS_2017,
        ),
    ]  # fmt: skip


@dataclass(frozen=True)
class _ToolCode:
    """One EvaluateSegmentation code as ``func(truth, segmentation)`` (voxel units, fuzzy mode)."""

    code: str

    def __call__(self, truth: Any, segmentation: Any) -> float:
        from proctor.metrics.segmentation import evaluate_segmentation

        return evaluate_segmentation(truth, segmentation, codes=(self.code,))[self.code]


_NAN = math.nan
_UNIT = (0.0, 1.0)
_SIGNED = (-1.0, 1.0)
_LENGTH = (0.0, math.inf)
# code, registry name, bounds, symmetric, order-free (voxel-wise), value when both volumes are empty
_SEGMENTATION: tuple[tuple[str, str, tuple[float, float], bool, bool, float | None], ...] = (
    ("DICE", "dice_score", _UNIT, True, True, _NAN),
    ("JACRD", "jaccard_score", _UNIT, True, True, _NAN),
    ("AUC", "segmentation_auc_score", _UNIT, False, True, _NAN),
    ("KAPPA", "cohen_kappa_score", _SIGNED, True, True, _NAN),
    ("RNDIND", "rand_index_score", _UNIT, True, True, None),
    ("ADJRIND", "adjusted_rand_index_score", _SIGNED, True, True, _NAN),
    ("ICCORR", "interclass_correlation_score", _SIGNED, True, True, _NAN),
    ("VOLSMTY", "volume_similarity_score", _UNIT, True, True, _NAN),
    ("MUTINF", "mutual_information_score", _UNIT, True, True, None),
    ("HDRFDST", "hausdorff_distance", _LENGTH, True, False, _NAN),
    ("AVGDIST", "average_distance", _LENGTH, True, False, _NAN),
    ("bAVD", "balanced_average_distance", _LENGTH, False, False, _NAN),
    ("MAHLNBS", "mahalanobis_distance", _LENGTH, True, False, _NAN),
    ("VARINFO", "variation_of_information_distance", (0.0, 2.0), True, True, None),
    ("GCOERR", "global_consistency_error", _UNIT, True, True, None),
    ("PROBDST", "probabilistic_distance", _LENGTH, True, True, _NAN),
    ("SNSVTY", "voxel_sensitivity_score", _UNIT, False, True, _NAN),
    ("SPCFTY", "voxel_specificity_score", _UNIT, False, True, None),
    ("PRCISON", "voxel_precision_score", _UNIT, False, True, _NAN),
    ("FMEASR", "f_measure_score", _UNIT, True, True, _NAN),
    ("ACURCY", "voxel_accuracy_score", _UNIT, True, True, None),
    ("FALLOUT", "voxel_fallout_error", _UNIT, False, True, None),
)


def _segmentation_entries() -> list[MetricInfo]:
    """EvaluateSegmentation's metrics (not its counts and volumes), direction from its table."""
    from proctor.metrics.segmentation import METRICS

    return [
        MetricInfo(
            name, _ToolCode(code), METRICS[code].direction, "segmentation", bounds, symmetric,
            f"EvaluateSegmentation {code}: {METRICS[code].name}.", order_free, undefined,
        )
        for code, name, bounds, symmetric, order_free, undefined in _SEGMENTATION
    ]  # fmt: skip


@dataclass(frozen=True)
class _ScenarioF1:
    """eHealth-KD 2019 F1 of one scenario as ``func(gold, submitted)`` (lists of sentences)."""

    scenario: int

    def __call__(self, gold: Any, submitted: Any) -> float:
        from proctor.metrics.extraction import Scenario, score_scenario

        return float(score_scenario(gold, submitted, scenario=Scenario(self.scenario)).f1)


def _extraction_entries() -> list[MetricInfo]:
    """eHealth-KD 2019 F1 per scenario; 0 on a zero denominator as the official script."""
    scenarios = {1: "main (keyphrases and relations)", 2: "task A (keyphrases)", 3: "task B"}
    return [
        MetricInfo(
            f"ehealthkd_scenario{number}_f1_score", _ScenarioF1(number), "higher",
            "annotated_sentences", (0.0, 1.0), False,
            f"eHealth-KD 2019 F1, scenario {number}: {what}.", undefined_value=0.0,
        )
        for number, what in scenarios.items()
    ]  # fmt: skip


_ENTRY_GROUPS: tuple[Callable[[], list[MetricInfo]], ...] = (
    _ranking_entries,
    _classification_entries,
    _tabular_entries,
    _physionet_answer_entries,
    _physionet2018_entries,
    _segmentation_entries,
    _extraction_entries,
)


def build_registry() -> dict[str, MetricInfo]:
    """Import the metric modules and collect their entries; names must be unique."""
    registry: dict[str, MetricInfo] = {}
    for group in _ENTRY_GROUPS:
        for info in group():
            if info.name in registry:
                raise MetricInputError(f"metric {info.name!r} is registered twice")
            registry[info.name] = info
    return registry


@cache
def _built() -> dict[str, MetricInfo]:
    return build_registry()


class _LazyRegistry(Mapping[str, MetricInfo]):
    """A read-only mapping that builds the registry the first time it is read."""

    def __getitem__(self, name: str) -> MetricInfo:
        return _built()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_built())

    def __len__(self) -> int:
        return len(_built())

    def __repr__(self) -> str:
        return f"REGISTRY({', '.join(self)})"


REGISTRY: Mapping[str, MetricInfo] = _LazyRegistry()
"""Every metric Proctor knows, by name (built on first access)."""


def get_metric(name: str) -> MetricInfo:
    """Look up a metric by its registry name; an unknown name raises an error listing the known."""
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise UnknownMetricError(f"unknown metric {name!r}; known metrics: {known}") from None
