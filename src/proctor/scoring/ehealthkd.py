"""The eHealth-KD 2019 evaluation: every submission of every participant, and the best ones.

Mirrors the official ``evaltest``: SUBMISSIONS holds participant folders, each holding
submission folders (``single``: SUBMISSIONS is one participant's folder of submission folders,
reported under that folder's name). A submission folder and GOLD hold ``scenario1-main/``,
``scenario2-taskA/`` and ``scenario3-taskB/``. Unlike the official tool, folders are visited in
name order, so the results (and the tie-breaking of :func:`best_per_scenario`) do not depend on
the file system.

:func:`score_task` and :func:`check_scenario_output` serve the ``predictions`` protocol: one
scenario folder per task, scored with the same reader and metrics.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from proctor.errors import UsageError
from proctor.formats.brat import (
    SCENARIO_FOLDERS,
    ExtractionFormatError,
    read_collection,
    read_gold,
    submission_sentence_file,
)
from proctor.metrics.extraction import Scenario, ScenarioScore, Sentence, score_scenario
from proctor.metrics.warning_capture import captured_warnings
from proctor.scoring.base import Scorer, TaskScores
from proctor.spec.scorer import UNIT_INTERVAL, ScorerDeclaration, count_metric, metric_declarations
from proctor.types import Direction

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


SCENARIO_OF_FOLDER = {folder: scenario for scenario, folder in SCENARIO_FOLDERS.items()}
"""The scenario each official folder name stands for (``scenario1-main`` → scenario 1)."""


def scenario_of(folder: Path) -> Scenario:
    """The scenario of a scenario folder, from its official name; ``ValueError`` otherwise."""
    found = SCENARIO_OF_FOLDER.get(folder.name)
    if found is None:
        names = ", ".join(SCENARIO_OF_FOLDER)
        raise ValueError(f"{folder.name!r} is not a scenario folder: use one of {names}")
    return found


def _sentence_file(folder: Path, scenario: Scenario) -> Path:
    """A submitted scenario folder's sentence file: ``output_scenarioN.txt``, else ``input_…``."""
    output = folder / f"output_scenario{scenario.value}.txt"
    return output if output.exists() else folder / f"input_scenario{scenario.value}.txt"


def check_scenario_output(folder: Path) -> str | None:
    """None when a submitted scenario folder reads as the official script reads it.

    The message names the file relative to ``folder`` and its line, never a host path, e.g.
    ``output_a_scenario1.txt line 3: expected 4 tab-separated fields ...``.
    """
    try:
        scenario = scenario_of(folder)
    except ValueError as err:
        return str(err)
    sentences = _sentence_file(folder, scenario)
    if not sentences.is_file():
        return (
            f"output_scenario{scenario.value}.txt: missing (copy input_scenario"
            f"{scenario.value}.txt, then write output_a_/output_b_scenario{scenario.value}.txt)"
        )
    try:
        with captured_warnings():  # the notes are the quiz's: not process-wide "ignore"
            read_collection(sentences)
    except ExtractionFormatError as err:
        line = "" if err.line is None else f" line {err.line}"
        problem = str(err).removeprefix(f"{err.path}{line}: ")
        return f"{err.path.name}{line}: {problem}"
    return None


def score_task(
    outputs: Path, references: Path, cases: Sequence[str], output_template: str
) -> TaskScores:
    """The official record of one scenario: F1, precision, recall and the eight counts.

    Each case is a scenario folder: the submitted one is ``outputs/<template>``, the gold one
    ``references/CASE``. A task is one scenario, so exactly one case is expected.
    """
    if len(cases) != 1:
        raise ValueError(f"an eHealth-KD task is one scenario folder, not {len(cases)}")
    per_case: dict[str, dict[str, float]] = {}
    for case in cases:
        gold_folder = references / case
        scenario = scenario_of(gold_folder)
        gold = read_collection(gold_folder / f"input_scenario{scenario.value}.txt")
        submitted_folder = outputs / output_template.format(record=case)
        submitted = read_collection(_sentence_file(submitted_folder, scenario))
        result = score_scenario(gold, submitted, scenario=scenario)
        per_case[case] = {key.lower(): float(value) for key, value in result.as_dict().items()}
    return TaskScores(dict(per_case[cases[0]]), per_case)


SCORER = Scorer(
    ScorerDeclaration(
        name="ehealthkd2019",
        summary="eHealth-KD 2019: the official F1 of one scenario (keyphrases and relations)",
        reference="{record}",
        metrics=metric_declarations(
            ("f1", Direction.HIGHER, "the scenario's official F1", UNIT_INTERVAL),
            (
                "precision",
                Direction.HIGHER,
                "(correct + partial/2) / submitted items",
                UNIT_INTERVAL,
            ),
            ("recall", Direction.HIGHER, "(correct + partial/2) / gold items", UNIT_INTERVAL),
            count_metric("correct_a", "keyphrases with the gold spans and label"),
            count_metric("incorrect_a", "keyphrases with the gold spans, another label"),
            count_metric("partial_a", "keyphrases overlapping a gold one"),
            count_metric("missing_a", "gold keyphrases not found"),
            count_metric("spurious_a", "submitted keyphrases matching none"),
            count_metric("correct_b", "relations matching a gold one"),
            count_metric("missing_b", "gold relations not found"),
            count_metric("spurious_b", "submitted relations matching none"),
        ),
    ),
    score_task,
    check_scenario_output,
)
"""The ``ehealthkd2019`` scorer: what it reports, how it scores, how one output is checked."""
