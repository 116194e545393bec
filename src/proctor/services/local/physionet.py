"""Use cases: the PhysioNet scorers' command lines (``proctor score physionet2018``, ``2017``).

2018: :class:`ArousalScoring` scores ``.vec`` files one at a time against a reference folder, as
the May-2018 ``score2018.py`` does: a record that fails (an unreadable reference, a bad value)
becomes a row carrying its error and is left out of the gross totals, and scoring goes on.
2017: :func:`score_physionet2017` scores an answers file against a reference file.
Printing the official table is left to the faces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from proctor.errors import InputFileError
from proctor.formats.vec import VecFormatError
from proctor.metrics.physionet2018 import ArousalTally
from proctor.metrics.physionet_scores import (
    LABELS_2017,
    Score2017,
    parse_answer_lines,
    score_2017,
)
from proctor.scoring.physionet2018 import record_name, score_vec_file
from proctor.services.local.input_errors import MetricInputError, input_errors_as

__all__ = [
    "LABELS_2017",
    "ArousalScoring",
    "GrossScores",
    "RecordRow",
    "Score2017",
    "score_physionet2017",
]


@dataclass(frozen=True, slots=True)
class RecordRow:
    """One record's line: its AUROC and AUPRC, or the ``error`` that failed it (values NaN).

    ``warned``: the file does not hold one line per reference sample (the official "wrong
    number of samples" warning, which comes before the record's line or its error).
    """

    record: str
    auroc: float
    auprc: float
    error: str | None = None
    warned: bool = False


@dataclass(frozen=True, slots=True)
class GrossScores:
    """The ``Overall`` line: gross AUROC and AUPRC of the records that did not fail."""

    auroc: float
    auprc: float


class ArousalScoring:
    """2018 ``.vec`` files scored one by one into one gross tally (a face prints each row)."""

    def __init__(self, reference_dir: Path) -> None:
        self._reference_dir = reference_dir
        self._tally = ArousalTally()

    def score(self, vec_file: str) -> RecordRow:
        """Score ``vec_file`` (``DIR/RECORD.vec``, named as given) against its reference."""
        record = record_name(vec_file)
        try:
            score, warned = score_vec_file(self._tally, vec_file, self._reference_dir)
        except VecFormatError as err:
            return RecordRow(record, math.nan, math.nan, str(err), bool(err.length_notes))
        except (InputFileError, MetricInputError) as err:
            return RecordRow(record, math.nan, math.nan, str(err))
        return RecordRow(record, score.auroc, score.auprc, warned=warned)

    def overall(self) -> GrossScores:
        """Gross AUROC and AUPRC of every record scored so far (NaN before any)."""
        return GrossScores(self._tally.gross_auroc(), self._tally.gross_auprc())


def _read_labels(path: Path, what: str) -> dict[str, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputFileError(f"{path}: cannot read the {what} file ({err})") from err
    return parse_answer_lines(text, source=str(path))


def score_physionet2017(answers: Path, reference: Path) -> Score2017:
    """The 2017 AF challenge score of ``answers`` (``RECORD,LABEL`` lines) against ``reference``.

    A missing answer counts as ``~``. An unreadable file, a malformed line, a record answered
    twice or not in the reference, or a label outside N, A, O, ~ raises ``InputFileError``.
    """
    with input_errors_as(InputFileError):
        given = _read_labels(answers, "answers")
        if not given:
            raise InputFileError(f"{answers} holds no answers: expected RECORD,LABEL lines")
        return score_2017(_read_labels(reference, "reference"), given)


def missing_answers_2017(answers: Path, reference: Path) -> list[str]:
    """Records of ``reference`` that ``answers`` leaves out (scored as noise unless strict)."""
    with input_errors_as(InputFileError):
        given = _read_labels(answers, "answers")
        return [r for r in _read_labels(reference, "reference") if r not in given]
