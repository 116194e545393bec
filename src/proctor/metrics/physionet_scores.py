"""Scores of the PhysioNet/CinC Challenges 2015, 2016 and 2017 on per-record answers.

Answers and references are mappings ``record -> label``, read from ``answers.txt`` /
``REFERENCE.csv`` style text by :func:`parse_answer_lines`. A reference record without an answer
gets the year's default (2015: 0 "false alarm"; 2016: 0 "unsure"; 2017: ``~`` "noisy"); an
answer for a record that is not in the reference is an error, as is a label outside the year's
set. Undefined ratios (an empty class) are NaN with an :class:`UndefinedMetricWarning`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning

LABELS_2015 = ("0", "1")
LABELS_2016 = ("-1", "0", "1")
LABELS_2017 = ("N", "A", "O", "~")


def parse_answer_lines(text: str, *, source: str = "answers") -> dict[str, str]:
    """Parse ``RECORD,LABEL`` lines (CRLF and blank lines allowed) into a mapping.

    Raises :class:`MetricInputError` naming ``source`` and the line for a malformed line or a
    record given twice.
    """
    answers: dict[str, str] = {}
    first_seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        fields = [field.strip() for field in line.split(",")]
        if len(fields) != 2 or not fields[0] or not fields[1]:
            raise MetricInputError(
                f"{source}, line {number}: expected 'RECORD,LABEL', got {line[:60]!r}"
            )
        record, label = fields
        if record in answers:
            raise MetricInputError(
                f"{source}, line {number}: record {record!r} is answered twice "
                f"(first on line {first_seen[record]}); keep one answer per record"
            )
        answers[record] = label
        first_seen[record] = number
    return answers


def _aligned(
    reference: Mapping[str, str], answers: Mapping[str, str], allowed: tuple[str, ...], default: str
) -> list[tuple[str, str]]:
    """(reference label, answer label) per reference record, after validation."""
    unknown = sorted(set(answers) - set(reference))
    if unknown:
        raise MetricInputError(
            f"answers for records not in the reference: {', '.join(unknown[:5])}"
            + (" ..." if len(unknown) > 5 else "")
        )
    for name, labels in (("reference", reference), ("answers", answers)):
        for record, label in labels.items():
            if label not in allowed:
                raise MetricInputError(
                    f"{name}: record {record!r} has label {label!r}; allowed: {', '.join(allowed)}"
                )
    return [(truth, answers.get(record, default)) for record, truth in reference.items()]


def _ratio(numerator: float, denominator: float, what: str) -> float:
    if denominator == 0:
        warnings.warn(f"{what} is undefined (0/0); returning NaN", UndefinedMetricWarning, 3)
        return math.nan
    return numerator / denominator


@dataclass(frozen=True)
class Score2015:
    """2015 false-alarm counts (positive = true alarm) and the challenge score."""

    tp: int
    tn: int
    fp: int
    fn: int
    score: float


def score_2015(reference: Mapping[str, str], answers: Mapping[str, str]) -> Score2015:
    """2015 score (TP+TN)/(TP+TN+FP+5·FN); labels "1" true alarm, "0" false; missing = "0"."""
    pairs = _aligned(reference, answers, LABELS_2015, "0")
    tp = sum(1 for truth, answer in pairs if truth == "1" and answer == "1")
    tn = sum(1 for truth, answer in pairs if truth == "0" and answer == "0")
    fp = sum(1 for truth, answer in pairs if truth == "0" and answer == "1")
    fn = sum(1 for truth, answer in pairs if truth == "1" and answer == "0")
    score = _ratio(tp + tn, tp + tn + fp + 5 * fn, "2015 score")
    return Score2015(tp, tn, fp, fn, score)


@dataclass(frozen=True)
class Score2016:
    """2016 heart-sound counts (unsure answers split half/half), Se, Sp and MAcc."""

    tp: float
    fn: float
    tn: float
    fp: float
    sensitivity: float
    specificity: float
    macc: float


def score_2016(reference: Mapping[str, str], answers: Mapping[str, str]) -> Score2016:
    """2016 MAcc = (Se + Sp)/2; "1" abnormal, "-1" normal, "0" unsure (counts half each way).

    Reference labels must be "1" or "-1"; a missing answer counts as unsure.
    """
    if any(label == "0" for label in reference.values()):
        raise MetricInputError('reference: labels must be "1" (abnormal) or "-1" (normal)')
    weight = {"1": 1.0, "0": 0.5, "-1": 0.0}
    pairs = _aligned(reference, answers, LABELS_2016, "0")
    tp = sum(weight[answer] for truth, answer in pairs if truth == "1")
    fn = sum(1.0 - weight[answer] for truth, answer in pairs if truth == "1")
    fp = sum(weight[answer] for truth, answer in pairs if truth == "-1")
    tn = sum(1.0 - weight[answer] for truth, answer in pairs if truth == "-1")
    se = _ratio(tp, tp + fn, "2016 sensitivity (no abnormal record)")
    sp = _ratio(tn, tn + fp, "2016 specificity (no normal record)")
    return Score2016(tp, fn, tn, fp, se, sp, (se + sp) / 2)


@dataclass(frozen=True)
class Score2017:
    """2017 AF classification: confusion matrix, F1 per class, challenge score.

    ``confusion`` rows are the reference, columns the answer, both in the order N, A, O, ~;
    ``score`` is the mean F1 of N, A and O (the noise F1 is reported, not averaged).
    """

    confusion: tuple[tuple[int, ...], ...]
    f1: dict[str, float]
    score: float


def score_2017(reference: Mapping[str, str], answers: Mapping[str, str]) -> Score2017:
    """2017 F1 = 2·M[k,k]/(row_k + col_k) per class; score = (F1_N + F1_A + F1_O)/3.

    A missing answer counts as ``~``; any label outside N, A, O, ~ is an error.
    """
    pairs = _aligned(reference, answers, LABELS_2017, "~")
    index = {label: i for i, label in enumerate(LABELS_2017)}
    matrix = [[0] * 4 for _ in LABELS_2017]
    for truth, answer in pairs:
        matrix[index[truth]][index[answer]] += 1
    f1: dict[str, float] = {}
    for label, k in index.items():
        row = sum(matrix[k])
        column = sum(matrix[i][k] for i in range(4))
        f1[label] = _ratio(2 * matrix[k][k], row + column, f"2017 F1 of class {label!r}")
    score = (f1["N"] + f1["A"] + f1["O"]) / 3
    return Score2017(tuple(tuple(row) for row in matrix), f1, score)
