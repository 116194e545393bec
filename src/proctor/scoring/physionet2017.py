"""The PhysioNet/CinC 2017 scorer for the records protocol: one label per record.

Each record's output holds its answer as the official ``answers.txt`` line would (``RECORD,L``)
or the label alone (``L``), ``L`` one of N, A, O, ~. The hidden references are the challenge's
``REFERENCE.csv`` (``RECORD,LABEL`` lines). A record without a usable output is answered ``~``
(noise), as the official scorer treats a missing answer; the challenge score is the mean F1 of
N, A and O.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning
from proctor.metrics.physionet_scores import LABELS_2017, parse_answer_lines, score_2017
from proctor.scoring.base import Scorer, TaskScores
from proctor.spec.scorer import UNIT_INTERVAL, ScorerDeclaration, count_metric, metric_declarations
from proctor.types import Direction

REFERENCE = "REFERENCE.csv"
MAX_OUTPUT_BYTES = 1024


def _label(text: str, record: str | None) -> str | None:
    """The label of one output's text, or None when it is not a valid answer."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) != 1:
        return None
    fields = [field.strip() for field in lines[0].split(",")]
    if len(fields) == 2 and (record is None or fields[0] == record):
        fields = [fields[1]]
    return fields[0] if len(fields) == 1 and fields[0] in LABELS_2017 else None


def check_label_output(path: Path) -> str | None:
    """None when ``path`` holds one answer line (``RECORD,LABEL`` or ``LABEL``)."""
    data = path.read_bytes()[: MAX_OUTPUT_BYTES + 1]
    if len(data) > MAX_OUTPUT_BYTES:
        return f"over {MAX_OUTPUT_BYTES} bytes: write one line, RECORD,LABEL"
    if _label(data.decode("utf-8", errors="replace"), None) is None:
        return "expected one line RECORD,LABEL (or LABEL) with LABEL one of N, A, O, ~"
    return None


def score_task(
    outputs: Path, references: Path, records: Sequence[str], output_template: str
) -> TaskScores:
    """F1 of each class and the 2017 score (mean F1 of N, A, O) over the hidden records."""
    try:
        truth = parse_answer_lines(
            (references / REFERENCE).read_text(encoding="utf-8"), source=REFERENCE
        )
    except (OSError, UnicodeDecodeError, MetricInputError) as err:
        raise ValueError(f"the hidden {REFERENCE} cannot be read: {err}") from None
    answers: dict[str, str] = {}
    zero_filled = []
    for record in records:
        path = outputs / output_template.format(record=record)
        label = _label(path.read_text(errors="replace"), record) if path.is_file() else None
        if label is None:
            zero_filled.append(record)
            label = "~"
        answers[record] = label
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        result = score_2017({r: truth[r] for r in records}, answers)
    summary = {
        "score": result.score,
        "f1_normal": result.f1["N"],
        "f1_af": result.f1["A"],
        "f1_other": result.f1["O"],
        "f1_noisy": result.f1["~"],
        "records": float(len(records)),
        "records_zero_filled": float(len(zero_filled)),
    }
    return TaskScores(summary, {}, tuple(zero_filled))


SCORER = Scorer(
    ScorerDeclaration(
        name="physionet2017",
        summary="PhysioNet/CinC 2017 AF classification: mean F1 of N, A, O",
        reference=REFERENCE,
        cases="records",
        metrics=metric_declarations(
            ("score", Direction.HIGHER, "mean F1 of normal, AF and other rhythm", UNIT_INTERVAL),
            ("f1_normal", Direction.HIGHER, "F1 of normal rhythm (N)", UNIT_INTERVAL),
            ("f1_af", Direction.HIGHER, "F1 of atrial fibrillation (A)", UNIT_INTERVAL),
            ("f1_other", Direction.HIGHER, "F1 of other rhythm (O)", UNIT_INTERVAL),
            (
                "f1_noisy",
                Direction.HIGHER,
                "F1 of noisy recordings (~), not in the score",
                UNIT_INTERVAL,
            ),
            count_metric("records", "hidden records scored"),
            count_metric("records_zero_filled", "records answered as noise (no output)"),
        ),
    ),
    score_task,
    check_label_output,
)
"""The ``physionet2017`` scorer: what it reports, how it scores, how one output is checked."""
