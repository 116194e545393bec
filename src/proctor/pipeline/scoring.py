"""The score stage: compare collected exam outputs with hidden references, in the worker.

Scoring runs in trusted host code, never in the entry's sandbox. A record whose entry failed
(no output, or an output that cannot be read) is scored as all zeros, as the 2018 challenge did.
Messages never carry reference values.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from proctor.formats.arousal_mat import read_arousal_reference
from proctor.formats.vec import read_vec
from proctor.metrics.calibration import CalibrationTally
from proctor.metrics.physionet2018 import ArousalTally, bin_indices, class_histograms
from proctor.metrics.physionet2018_bootstrap import bootstrap_gross_auprc


@dataclass(frozen=True, slots=True)
class TaskScores:
    """Summary metrics of a task and per-record values."""

    summary: dict[str, float]
    per_record: dict[str, dict[str, float]] = field(default_factory=dict)
    zero_filled: tuple[str, ...] = ()


Scorer = Callable[[Path, Path, Sequence[str], str], TaskScores]


def _prediction(outputs: Path, name: str, length: int) -> tuple[np.ndarray, bool]:
    """The record's predictions, or zeros (and True) when the entry left none usable."""
    path = outputs / name
    if not path.is_file():
        return np.zeros(length, dtype=np.float32), True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values, _ = read_vec(path, length)
    except ValueError:
        return np.zeros(length, dtype=np.float32), True
    return values, False


def score_physionet2018(
    outputs: Path, references: Path, records: Sequence[str], output_template: str
) -> TaskScores:
    """Gross AUPRC/AUROC of the 2018 challenge, plus per-record values, Brier score and ECE.

    Brier score and expected calibration error are computed over every scored sample
    (label > 0 positive, label == 0 negative, label < 0 dropped), accumulated record by record.
    ``auprc_ci95_low``/``_high`` bound the gross AUPRC by a seeded bootstrap over records.
    """
    tally = ArousalTally()
    calibration = CalibrationTally()
    per_record: dict[str, dict[str, float]] = {}
    zero_filled: list[str] = []
    positives: list[np.ndarray] = []
    negatives: list[np.ndarray] = []
    for record in records:
        labels = read_arousal_reference(references / f"{record}-arousal.mat")
        predictions, zeroed = _prediction(
            outputs, output_template.format(record=record), labels.shape[0]
        )
        if zeroed:
            zero_filled.append(record)
        positive, negative = class_histograms(bin_indices(predictions), labels)
        positives.append(positive)
        negatives.append(negative)
        result = tally.add_histograms(positive, negative)
        per_record[record] = {"auprc": float(result.auprc), "auroc": float(result.auroc)}
        scored = ~(labels < 0)  # NaN labels count as negatives, as in the AUPRC
        calibration.add(labels[scored] > 0, predictions[scored].astype(np.float64))
    summary = {
        "auprc": float(tally.gross_auprc()),
        "auroc": float(tally.gross_auroc()),
        "brier": calibration.brier_score_loss(),
        "ece": calibration.expected_calibration_error(),
        **_auprc_interval(positives, negatives),
        "records": float(len(records)),
        "records_zero_filled": float(len(zero_filled)),
    }
    return TaskScores(summary, per_record, tuple(zero_filled))


def _auprc_interval(positives: list[np.ndarray], negatives: list[np.ndarray]) -> dict[str, float]:
    if not positives:
        return {"auprc_ci95_low": math.nan, "auprc_ci95_high": math.nan}
    interval = bootstrap_gross_auprc(np.stack(positives), np.stack(negatives), seed=2018)
    return {"auprc_ci95_low": float(interval.low), "auprc_ci95_high": float(interval.high)}


SCORERS: dict[str, Scorer] = {"physionet2018": score_physionet2018}
SCORER_METRICS: dict[str, tuple[str, ...]] = {
    "physionet2018": (
        "auprc",
        "auroc",
        "brier",
        "ece",
        "auprc_ci95_low",
        "auprc_ci95_high",
        "records",
        "records_zero_filled",
    ),
}
"""The metrics each built-in scorer reports, in order."""
SCORER_REFERENCES: dict[str, str] = {"physionet2018": "{record}-arousal.mat"}
"""The reference file each built-in scorer needs per hidden record."""


def get_scorer(name: str) -> Scorer:
    """The built-in scorer called ``name``."""
    try:
        return SCORERS[name]
    except KeyError:
        known = ", ".join(sorted(SCORERS))
        raise KeyError(f"unknown scorer {name!r}: built-in scorers are {known}") from None
