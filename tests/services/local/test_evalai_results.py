"""EvalAI's reading of a script's ``result`` and of a leaderboard's ``default_order_by``.

EvalAI's worker reads each entry of ``result`` as the split that is its first key, and fails
the whole submission when an entry names a split the phase does not have, or holds a NaN (its
database refuses it: a recall over no positives is one); its challenge
creation refuses a ``default_order_by`` that is not one of the labels, yet public challenges
rank on one (a ``Total`` their script returns but no label lists): Proctor imports it, ranks
on it, shows it and warns. Public challenges do both (a test phase whose script also reports
the train split, a ``Total`` ranked on but not listed); the look-alikes here are written for
the purpose.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bundle_direct import worker_split
from evalai_challenge import (
    MAIN_PY,
    SUBMISSION,
    evaluate_directly,
    make_evalai_challenge,
    make_upload,
)

from proctor.resolve import load_challenge
from proctor.scoring import evalai_driver
from proctor.scoring.evalai import EvalaiScorer
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import Failure, RunStatus

LABELS = {"Accuracy": 0.5, "Errors": 2}


def _driver_reads(output: Any, split: str, phase_splits: list[str]) -> dict[str, Any] | str:
    """What the driver makes of ``output``: the split's labels, or its failure message."""
    try:
        return evalai_driver.split_scores(output, split, phase_splits)
    except SystemExit:
        return "failed"


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ([{"train_split": LABELS}], LABELS),
        ([{"train_split": LABELS}, {"test_split": {"Accuracy": 1}}], "failed"),  # not dev's
        ([{"other_split": LABELS, "train_split": LABELS}], "failed"),  # first key only
        ([{"train_split": LABELS}, "train_split"], "failed"),  # an entry that is no mapping
        ([{"train_split": {**LABELS, "Total": float("nan")}}], "failed"),  # Postgres refuses NaN
    ],
)
def test_result_is_read_as_evalais_worker_reads_it(result: Any, expected: Any) -> None:
    output = {"result": result}
    assert _driver_reads(output, "train_split", ["train_split"]) == expected
    scorer = EvalaiScorer.model_validate(
        {
            "evalai": ".",
            "phase": "dev",
            "split": "train_split",
            "annotation": "dev.json",
            "phase_splits": ["train_split"],
            "metrics": {"Accuracy": {"direction": "higher"}},
        }
    )
    assert worker_split(output, scorer) == (None if expected == "failed" else expected)


def test_an_entry_first_naming_another_split_of_the_phase_reports_that_split() -> None:
    output = {"result": [{"train_split": LABELS, "test_split": {"Accuracy": 1}}]}
    both = ["train_split", "test_split"]
    assert _driver_reads(output, "train_split", both) == LABELS
    assert _driver_reads(output, "test_split", both) == "failed"  # EvalAI reads no test_split


def test_the_import_gives_each_task_its_phases_splits(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    import_challenge(source, tmp_path / "dest", "host")
    tasks = {task.name: task.scorer for task in load_challenge(tmp_path / "dest").tasks}
    splits = {name: getattr(scorer, "phase_splits", None) for name, scorer in tasks.items()}
    assert splits == {
        "dev-train-split": ("train_split",),
        "test-train-split": ("train_split", "test_split"),
        "test-test-split": ("train_split", "test_split"),
    }


TOTAL_SCRIPT = MAIN_PY.replace('"Extra": 7', '"Total": 10 * share - errors')
"""A script returning ``Total`` beside its labels (a real challenge ranks on its sum)."""


def _ranked_on_total(source: Path) -> None:
    """Rank the toy's leaderboard on ``Total``, a key that is none of its labels."""
    config = source / "challenge_config.yaml"
    config.write_bytes(config.read_bytes().replace(b'"Accuracy",\r\n', b'"Total",\r\n', 1))
    assert b'"default_order_by": "Total"' in config.read_bytes()


def test_a_default_order_by_on_a_returned_key_is_ranked_on_shown_and_warned(
    tmp_path: Path,
) -> None:
    source = make_evalai_challenge(tmp_path / "source", main_py=TOTAL_SCRIPT)
    _ranked_on_total(source)
    warnings = import_challenge(source, tmp_path / "dest", "host").warnings
    (said,) = [text for text in warnings if "'Total' is not one of the labels" in text]
    assert said.startswith("leaderboard[1].schema.default_order_by 'Total'")
    assert "the board ranks on it and shows it" in said and "script names 'Total'" in said
    challenge = load_challenge(tmp_path / "dest")
    (board,) = challenge.phase("test").leaderboards
    assert board.metrics == ("Total", "Errors", "Accuracy")  # ranked on Total, shown first
    scorer = challenge.task("test-test-split").scorer
    assert isinstance(scorer, EvalaiScorer)
    assert scorer.metrics["Total"].direction.value == "higher"  # the split's descending order


def test_a_default_order_by_the_script_never_names_is_imported_with_a_stern_warning(
    tmp_path: Path,
) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    _ranked_on_total(source)
    warnings = import_challenge(source, tmp_path / "dest", "host").warnings
    (said,) = [text for text in warnings if "'Total' is not one of the labels" in text]
    assert "the evaluation script never names 'Total'" in said and "every submission fails" in said


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_board_on_a_returned_key_scores_it_as_the_script_returns_it(shared_dir: Path) -> None:
    source = make_evalai_challenge(shared_dir / "source", main_py=TOTAL_SCRIPT)
    _ranked_on_total(source)
    challenge = shared_dir / "challenge"
    import_challenge(source, challenge, "host")
    upload = make_upload(shared_dir / "upload", SUBMISSION)
    report = run_entry(
        RunRequest(upload, str(challenge), phase="dev"), Settings(work_root=shared_dir / "runs")
    )
    assert report.status is RunStatus.SCORED, report.to_json()
    script, annotation = challenge / "evaluation_script", source / "annotations/dev.json"
    direct = evaluate_directly(script, annotation, upload / "guesses.json", "dev")
    assert report.scores["dev-train-split"]["Total"] == direct["result"][0]["train_split"]["Total"]


EVERY_SPLIT_SCRIPT = """\
import json


def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):
    with open(test_annotation_file) as handle:
        truth = json.load(handle)["train_split"]
    with open(user_submission_file) as handle:
        guesses = json.load(handle)
    right = sum(guesses.get(key) == label for key, label in truth.items())
    labels = {"Accuracy": right / len(truth), "Errors": len(truth) - right}
    return {"result": [{"train_split": labels}, {"test_split": labels}]}
"""


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_result_naming_a_split_the_phase_lacks_fails_as_on_evalai(shared_dir: Path) -> None:
    source = make_evalai_challenge(shared_dir / "source", main_py=EVERY_SPLIT_SCRIPT)
    challenge = shared_dir / "challenge"
    import_challenge(source, challenge, "host")
    upload = make_upload(shared_dir / "upload", SUBMISSION)
    settings = Settings(work_root=shared_dir / "runs")
    test = run_entry(RunRequest(upload, str(challenge), phase="test"), settings)
    assert test.status is RunStatus.SCORED, test.to_json()  # the test phase has both splits
    script, annotation = challenge / "evaluation_script", source / "annotations/test.json"
    direct = evaluate_directly(script, annotation, upload / "guesses.json", "test")
    assert test.scores["test-train-split"] == direct["result"][0]["train_split"]
    dev = run_entry(RunRequest(upload, str(challenge), phase="dev", keep=True), settings)
    assert dev.status is not RunStatus.SCORED
    assert dev.failure is Failure.SCORER, dev.to_json()  # the organizer's script
    assert dev.run_dir is not None
    log = (dev.run_dir / "scoring-dev-train-split.log").read_text()
    assert "split 'test_split', which this phase does not have (its splits: train_split)" in log


def test_a_warning_about_a_board_linked_to_several_splits_is_said_once(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    config = source / "challenge_config.yaml"
    metadata = b'"metadata": {"Errors": {"sort_ascending": True, "description": "wrong labels"}}'
    assert metadata in config.read_bytes()
    disagreeing = metadata[:-1] + b', "Accuracy": {"sort_ascending": True}}'
    config.write_bytes(config.read_bytes().replace(metadata, disagreeing))
    warnings = import_challenge(source, tmp_path / "dest", "host").warnings
    about = [text for text in warnings if "Accuracy.sort_ascending" in text]
    assert len(about) == 1, warnings  # the board is linked to three phase-splits
