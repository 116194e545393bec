"""The eHealth-KD 2019 evaluation: every submission of every participant, and the best ones.

Mirrors the official ``evaltest``: SUBMISSIONS holds participant folders, each holding
submission folders (``single``: SUBMISSIONS is one participant's folder of submission folders,
reported under that folder's name). A submission folder and GOLD hold ``scenario1-main/``,
``scenario2-taskA/`` and ``scenario3-taskB/``. Unlike the official tool, folders are visited in
name order, so the results (and the tie-breaking of :func:`best_per_scenario`) do not depend on
the file system.
"""

from __future__ import annotations

from pathlib import Path

from proctor.errors import UsageError
from proctor.formats.brat import (
    SCENARIO_FOLDERS,
    read_collection,
    read_gold,
    submission_sentence_file,
)
from proctor.metrics.extraction import Scenario, ScenarioScore, Sentence, score_scenario

Record = dict[str, float | str]
"""One scenario's official result: eight counts, recall, precision, f1 and ``submit``."""

Submission = dict[str, Record | str]
"""One submission's official entry: ``submit`` (its folder name) and one record per scenario."""

SCENARIO_KEYS = {scenario: f"scenario{scenario.value}" for scenario in Scenario}
"""The key of each scenario in a :data:`Submission` (``scenario1`` ...), in scenario order."""


def score_submission(
    folder: Path, gold: dict[Scenario, list[Sentence]]
) -> dict[Scenario, ScenarioScore]:
    """Score one submission folder in all three scenarios against ``read_gold``'s result."""
    return {
        scenario: score_scenario(
            gold[scenario],
            read_collection(submission_sentence_file(folder, scenario)),
            scenario=scenario,
        )
        for scenario in SCENARIO_FOLDERS
    }


def evaluate_participants(
    submissions: Path, gold_root: Path, *, single: bool
) -> dict[str, list[Submission]]:
    """Score every submission folder; participant name → one entry per submission, name order.

    Raises :class:`UsageError` when a folder is missing or holds a stray file, and the readers'
    ``ExtractionFormatError`` (a ``MetricInputError``) for a malformed file.
    """
    for path, what in ((submissions, "SUBMISSIONS"), (gold_root, "GOLD")):
        if not path.is_dir():
            raise UsageError(f"{what} {path} is not a folder")
    participants = [submissions] if single else _subfolders(submissions)
    if not participants:
        raise UsageError(
            f"SUBMISSIONS {submissions} holds no participant folders: nothing to score "
            "(with --single, pass one participant's folder of submissions)"
        )
    gold = read_gold(gold_root)
    return {
        folder.name: [evaluate_submission(entry, gold) for entry in _subfolders(folder)]
        for folder in participants
    }


def _subfolders(folder: Path) -> list[Path]:
    entries = sorted(folder.iterdir(), key=lambda path: path.name)
    for entry in entries:
        if not entry.is_dir():
            raise UsageError(
                f"{entry} is not a folder: {folder} must hold only folders "
                "(participants, or submissions with --single); move other files away"
            )
    return entries


def evaluate_submission(folder: Path, gold: dict[Scenario, list[Sentence]]) -> Submission:
    """The official entry of one submission: ``submit`` and one record per scenario."""
    entry: Submission = {"submit": folder.name}
    for scenario, result in score_submission(folder, gold).items():
        record: Record = dict(result.as_dict())
        record["submit"] = folder.name
        entry[SCENARIO_KEYS[scenario]] = record
    return entry


def best_per_scenario(results: dict[str, list[Submission]]) -> dict[str, dict[str, Record]]:
    """Per participant and scenario, the record with the highest F1 (the first one on ties)."""
    best: dict[str, dict[str, Record]] = {}
    for participant, entries in results.items():
        best[participant] = {}
        for key in SCENARIO_KEYS.values():
            records = [entry[key] for entry in entries]
            best[participant][key] = max(
                (record for record in records if isinstance(record, dict)),
                key=lambda record: record["f1"],
            )
    return best
