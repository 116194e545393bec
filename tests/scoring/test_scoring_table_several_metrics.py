"""The ``table`` scorer with several metrics: one prediction file serves every metric.

``table: {metrics: [log_loss, f1_macro]}`` scores both from one upload of per-class
probabilities (a labels metric takes each row's most probable class, the first column on a
tie), and a board may rank on either.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sklearn.metrics as skm
import yaml
from table_challenge import DEV, TEST, make_table_challenge

from proctor.errors import ConfigError
from proctor.formats.table_csv import TableFormatError
from proctor.leaderboard.boards import compute_phase_board
from proctor.leaderboard.model import ScoredSubmission
from proctor.pipeline.report import RunStatus
from proctor.resolve import load_challenge
from proctor.scoring.table import TableOptions, check_prediction
from proctor.scoring.table_metrics import score_metrics
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import Direction

CLASSES = ("bird", "cat", "dog")
Probabilities = dict[str, dict[str, float]]


def _two_metric_challenge(root: Path) -> Path:
    folder = make_table_challenge(root, metric="log_loss")
    spec = yaml.safe_load((folder / "challenge.yaml").read_text())
    spec["tasks"][0]["scorer"] = {"table": {"metrics": ["log_loss", "f1_macro"]}}
    spec["phases"][0]["leaderboards"] = [
        {"name": "by_loss", "metrics": ["log_loss", "f1_macro"]},
        {"name": "by_f1", "metrics": ["f1_macro", "log_loss"]},
    ]
    (folder / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return folder


def _sure(answers: dict[str, str], sure: float) -> Probabilities:
    other = (1 - sure) / 2
    return {
        key: {c: sure if c == label else other for c in CLASSES} for key, label in answers.items()
    }


def _csv(rows: Probabilities, columns: tuple[str, ...] = CLASSES) -> str:
    body = "".join(
        f"{key},{','.join(repr(probs[c]) for c in columns)}\n" for key, probs in rows.items()
    )
    return "id," + ",".join(columns) + "\n" + body


def _entry(root: Path, test: Probabilities) -> Path:
    for split, rows in (("dev", _sure(DEV, 0.8)), ("test", test)):
        folder = root / split / "main"
        folder.mkdir(parents=True)
        (folder / "submission.csv").write_text(_csv(rows))
    return root


def _expected(test: Probabilities) -> dict[str, float]:
    keys = list(TEST)
    truth = [TEST[k] for k in keys]
    matrix = [[test[k][c] for c in CLASSES] for k in keys]
    guessed = [max(CLASSES, key=test[k].__getitem__) for k in keys]
    return {
        "log_loss": skm.log_loss(truth, matrix, labels=list(CLASSES)),
        "f1_macro": skm.f1_score(truth, guessed, average="macro"),
    }


# A: the true class always first but never sure (perfect F1, a middling loss); B: sure and
# right on five rows, wrong on the bird (a lower loss, a lower F1).
CAUTIOUS = _sure(TEST, 0.45)
BOLD = {**_sure(TEST, 0.98), "t3": {"bird": 0.3, "cat": 0.4, "dog": 0.3}}


def _run(tmp_path: Path, challenge: Path, name: str, test: Probabilities) -> dict[str, float]:
    entry = _entry(tmp_path / name, test)
    report = run_entry(RunRequest(entry, str(challenge)), Settings(work_root=tmp_path / "w"))
    assert report.status is RunStatus.SCORED, report.to_json()
    return dict(report.scores["main"])


def test_a_table_task_with_two_metrics_scores_both_from_one_probability_file(
    tmp_path: Path,
) -> None:
    challenge = _two_metric_challenge(tmp_path / "challenge")
    for name, test in (("cautious", CAUTIOUS), ("bold", BOLD)):
        scores = _run(tmp_path, challenge, name, test)
        expected = _expected(test)
        assert scores["log_loss"] == pytest.approx(expected["log_loss"], rel=1e-12)
        assert scores["f1_macro"] == pytest.approx(expected["f1_macro"], abs=1e-12)
        assert scores["rows"] == len(TEST)


def test_two_metrics_declare_both_directions_and_a_board_ranks_on_either(
    tmp_path: Path,
) -> None:
    folder = _two_metric_challenge(tmp_path / "challenge")
    challenge = load_challenge(folder)
    declared = challenge.tasks[0].scorer_declaration
    assert declared.metric_names == ("log_loss", "f1_macro", "rows")
    assert declared.metric("log_loss").direction is Direction.LOWER
    assert declared.metric("f1_macro").direction is Direction.HIGHER
    start = datetime(2026, 1, 1, tzinfo=UTC)
    submissions = [
        ScoredSubmission(
            name, team, start + timedelta(minutes=i), {"main": _run(tmp_path, folder, name, test)}
        )
        for i, (name, team, test) in enumerate(
            (("cautious", "owls", CAUTIOUS), ("bold", "hawks", BOLD))
        )
    ]
    by_loss = compute_phase_board(challenge, "final", "by_loss", submissions)
    by_f1 = compute_phase_board(challenge, "final", "by_f1", submissions)
    assert [row.team for row in by_loss.rows] == ["hawks", "owls"]
    assert [row.team for row in by_f1.rows] == ["owls", "hawks"]


def test_the_single_metric_form_still_loads(tmp_path: Path) -> None:
    challenge = load_challenge(make_table_challenge(tmp_path / "c", metric="f1_macro"))
    assert challenge.tasks[0].scorer_declaration.metric_names == ("f1_macro", "rows")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"metric": "f1_macro", "metrics": ["log_loss"]}, "metric or metrics, not both"),
        ({"metrics": ["f1_macro", "f1_macro"]}, "f1_macro listed twice"),
        ({"metrics": []}, "name the metrics to score"),
        ({"metrics": ["log_loss", "f2"]}, "unknown table metric 'f2'"),
        ({"metrics": ["f1_macro", "map_at_k"]}, "map_at_k needs k"),
    ],
)
def test_a_bad_metrics_list_is_a_config_error_naming_the_fix(
    tmp_path: Path, table: dict[str, Any], message: str
) -> None:
    folder = make_table_challenge(tmp_path / "c")
    spec = yaml.safe_load((folder / "challenge.yaml").read_text())
    spec["tasks"][0]["scorer"] = {"table": table}
    spec.pop("leaderboard")
    (folder / "challenge.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.scorer") as caught:
        load_challenge(folder)
    assert message in str(caught.value)


def _files(tmp_path: Path, solution: str, prediction: str) -> tuple[Path, Path]:
    (tmp_path / "solution.csv").write_text(solution)
    (tmp_path / "submission.csv").write_text(prediction)
    return tmp_path / "solution.csv", tmp_path / "submission.csv"


def test_a_labels_metric_takes_the_most_probable_class_and_the_first_column_on_a_tie(
    tmp_path: Path,
) -> None:
    # columns in the file's own order: dog before cat before bird
    solution, prediction = _files(
        tmp_path,
        "id,target\nr1,dog\nr2,cat\nr3,bird\nr4,cat\nr5,bird\n",
        "id,dog,cat,bird\n"
        "r1,0.4,0.4,0.2\n"  # tie dog/cat: dog, the first column
        "r2,0.2,0.4,0.4\n"  # tie cat/bird: cat
        "r3,0.1,0.2,0.7\n"  # bird
        "r4,0.5,0.5,0.0\n"  # tie dog/cat: dog
        "r5,0.3,0.3,0.3\n",  # a three-way tie: dog
    )
    options = TableOptions(metrics=("accuracy", "f1_macro", "log_loss"))
    scores = score_metrics(solution, prediction, options)
    truth = ["dog", "cat", "bird", "cat", "bird"]
    guessed = ["dog", "cat", "bird", "dog", "dog"]
    assert scores.values["accuracy"] == pytest.approx(skm.accuracy_score(truth, guessed))
    assert scores.values["f1_macro"] == pytest.approx(skm.f1_score(truth, guessed, average="macro"))
    assert math.isfinite(scores.values["log_loss"])
    assert scores.rows == len(truth)


def test_a_target_column_beside_the_probabilities_gives_the_labels(tmp_path: Path) -> None:
    solution, prediction = _files(
        tmp_path,
        "id,target\nr1,a\nr2,b\nr3,b\n",
        "id,target,a,b\nr1,a,0.4,0.6\nr2,b,0.3,0.7\nr3,a,0.2,0.8\n",
    )
    scores = score_metrics(solution, prediction, TableOptions(metrics=("accuracy", "log_loss")))
    assert scores.values["accuracy"] == pytest.approx(2 / 3)  # the target column, not argmax
    expected = skm.log_loss(["a", "b", "b"], [[0.4, 0.6], [0.3, 0.7], [0.2, 0.8]])
    assert scores.values["log_loss"] == pytest.approx(expected, rel=1e-12)


def test_probability_columns_pass_the_output_check_of_a_labels_metric(tmp_path: Path) -> None:
    (tmp_path / "submission.csv").write_text("id,a,b\nr1,0.4,0.6\n")
    labels = TableOptions(metrics=("f1_macro",))
    assert check_prediction(labels, tmp_path / "submission.csv") is None
    (tmp_path / "one.csv").write_text("id,a\nr1,0.4\n")
    problem = check_prediction(labels, tmp_path / "one.csv")
    assert problem is not None and problem.startswith("one.csv: no column 'target'")
    values = TableOptions(metrics=("rmse",))
    problem = check_prediction(values, tmp_path / "submission.csv")
    assert problem is not None and "no column 'target'" in problem


def test_a_probability_file_missing_a_class_column_is_refused_for_a_labels_metric(
    tmp_path: Path,
) -> None:
    solution, prediction = _files(
        tmp_path, "id,target\nr1,a\nr2,b\nr3,c\n", "id,a,b\nr1,0.4,0.6\nr2,0.3,0.7\nr3,0.5,0.5\n"
    )
    with pytest.raises(TableFormatError, match="no probability column for class 'c'"):
        score_metrics(solution, prediction, TableOptions(metrics=("accuracy",)))
