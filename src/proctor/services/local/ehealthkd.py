"""Use case: the eHealth-KD 2019 evaluation of submission folders (``proctor score ehealthkd``).

:func:`score_participants` walks the participants' submission folders as the official
``evaltest`` does (in name order) and scores each against the gold folders;
:func:`best_per_scenario` keeps each participant's best submission per scenario. The JSON and
table renderings of the official tool are left to the faces.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from proctor.errors import InputFileError
from proctor.metrics.warning_capture import captured_warnings
from proctor.scoring.ehealthkd import (
    SCENARIO_KEYS,
    Record,
    Submission,
    best_per_scenario,
    evaluate_participants,
)
from proctor.services.local.input_errors import input_errors_as

__all__ = [
    "SCENARIO_KEYS",
    "ParticipantResults",
    "Record",
    "Submission",
    "best_per_scenario",
    "score_participants",
]


@dataclass(frozen=True, slots=True)
class ParticipantResults:
    """Participant name → one official entry per submission; the readers' warnings, each once.

    A warning says what a reader dropped (a relation crossing sentence boundaries ...); the
    scores already leave it out, as the official tool does.
    """

    submissions: dict[str, list[Submission]]
    warnings: tuple[str, ...]


def score_participants(submissions: Path, gold: Path, *, single: bool) -> ParticipantResults:
    """Score every submission folder under ``submissions`` against ``gold``.

    ``single``: ``submissions`` is one participant's folder of submission folders. A missing
    folder or a stray file raises ``UsageError``; a malformed file ``InputFileError`` naming
    the file and line.
    """
    with captured_warnings() as caught, input_errors_as(InputFileError):
        results = evaluate_participants(submissions, gold, single=single)
    return ParticipantResults(results, tuple(dict.fromkeys(str(note) for note in caught)))
