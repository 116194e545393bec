"""The PhysioNet/CinC 2018 scorer: gross AUPRC of stored ``.vec`` outputs against references.

A record whose entry failed (no output, or an output the shared check refused) is scored as all
zeros, as the 2018 challenge did. The output check is the official parser run over every line
of the file, so the quiz, the exam counts and the zero-fill agree on what a valid output is.
:func:`score_vec_file` scores one ``.vec`` file given by name, as the official ``score2018.py``
does on its command line.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from proctor.formats.arousal_mat import read_arousal_reference
from proctor.formats.vec import VecFormatError, VecLengthWarning, read_vec, read_vec_histograms
from proctor.metrics.calibration import CalibrationTally
from proctor.metrics.physionet2018 import (
    ArousalTally,
    RecordScore,
    bin_indices,
    class_histograms,
)
from proctor.metrics.physionet2018_bootstrap import bootstrap_gross_auprc
from proctor.scoring.base import Scorer, TaskScores
from proctor.spec.scorer import UNIT_INTERVAL, ScorerDeclaration, count_metric, metric_declarations
from proctor.types import Direction


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


def score_task(
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
        # the official range reaches half a thousandth past [0, 1] (scored in the end bins);
        # calibration takes such a value as the end it stands for
        probabilities = np.clip(predictions[scored].astype(np.float64), 0.0, 1.0)
        calibration.add(labels[scored] > 0, probabilities)
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


def record_name(vec_file: str) -> str:
    """``RECORD`` of ``DIR/RECORD.vec``, taken from the path exactly as the official scorer."""
    return os.path.basename(vec_file).removesuffix(".vec")


def reference_file(reference_dir: Path, record: str) -> Path:
    """``DIR/RECORD/RECORD-arousal.mat`` as the official layout has it, else ``DIR/RECORD-...``."""
    nested = reference_dir / record / f"{record}-arousal.mat"
    flat = reference_dir / f"{record}-arousal.mat"
    return flat if not nested.exists() and flat.exists() else nested


def score_vec_file(
    tally: ArousalTally, vec_file: str, reference_dir: Path
) -> tuple[RecordScore, bool]:
    """Score one ``.vec`` file into ``tally``: its :class:`RecordScore`, and whether it warned.

    The reference is :func:`reference_file` of the file's :func:`record_name`. The flag is True
    when the file does not hold one line per reference sample (the official "wrong number of
    samples" warning; missing samples count as 0). An unreadable reference raises
    ``InputFileError``; a bad value raises :class:`VecFormatError`, whose ``length_notes`` are
    not empty when the line count was wrong too (the official scorer warns before that error).
    Nothing is added to ``tally`` when an error is raised.
    """
    truth = read_arousal_reference(reference_file(reference_dir, record_name(vec_file)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VecLengthWarning)
        positive, negative, notes = read_vec_histograms(Path(vec_file), truth)
    return tally.add_histograms(positive, negative), bool(notes)


def _line_count(path: Path) -> int:
    count, last = 0, b"\n"
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


def check_vec_output(path: Path) -> str | None:
    """None when every line of ``path`` is a probability the official scorer accepts.

    An empty file is valid (the official scorer pads missing samples with zeros and warns).
    The message names the line, never the host path.
    """
    lines = _line_count(path)
    if lines == 0:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            read_vec(path, lines)
    except VecFormatError as err:
        return str(err).removeprefix(f"{err.path}, ").removeprefix(f"{err.path}: ")
    return None


SCORER = Scorer(
    ScorerDeclaration(
        name="physionet2018",
        summary="PhysioNet/CinC 2018 arousals: gross AUPRC over every hidden record",
        reference="{record}-arousal.mat",
        cases="records",
        metrics=metric_declarations(
            (
                "auprc",
                Direction.HIGHER,
                "gross area under the precision-recall curve",
                UNIT_INTERVAL,
            ),
            ("auroc", Direction.HIGHER, "gross area under the ROC curve", UNIT_INTERVAL),
            ("brier", Direction.LOWER, "Brier score over every scored sample", UNIT_INTERVAL),
            (
                "ece",
                Direction.LOWER,
                "expected calibration error (10 equal-width bins)",
                UNIT_INTERVAL,
            ),
            ("auprc_ci95_low", Direction.HIGHER, "bootstrap 95% interval of the AUPRC: low"),
            ("auprc_ci95_high", Direction.HIGHER, "bootstrap 95% interval of the AUPRC: high"),
            count_metric("records", "hidden records scored"),
            count_metric("records_zero_filled", "records scored as zeros (no output)"),
        ),
    ),
    score_task,
    check_vec_output,
)
"""The ``physionet2018`` scorer: what it reports, how it scores, how one output is checked."""
