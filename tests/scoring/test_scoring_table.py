"""The ``table`` scorer in a predictions challenge: ``proctor run`` scores an uploaded CSV with
the declared metric, ranks by its direction, and blames the entry for ids that do not match."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sklearn.metrics as skm
import yaml
from table_challenge import DEV, SECRET, TEST, make_table_challenge, write_prediction

from proctor.errors import ConfigError
from proctor.resolve import load_challenge
from proctor.types import Direction

PROCTOR = Path(sys.executable).parent / "proctor"
GUESS = {"t1": "cat", "t2": "cat", "t3": "bird", "t4": "dog", "t5": "dog", "t6": "cat"}


def proctor(*args: str, work_root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROCTOR_WORK_ROOT": str(work_root)}
    return subprocess.run(
        [str(PROCTOR), *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_proctor_run_scores_the_uploaded_csv_with_the_declared_macro_f1(tmp_path: Path) -> None:
    challenge = make_table_challenge(tmp_path / "challenge")
    entry = write_prediction(tmp_path / "entry", DEV, dict(reversed(GUESS.items())))
    done = proctor("run", str(entry), "-c", str(challenge), "--json", work_root=tmp_path / "w")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "scored"
    keys = list(TEST)
    expected = skm.f1_score([TEST[k] for k in keys], [GUESS[k] for k in keys], average="macro")
    assert report["scores"]["main"]["f1_macro"] == pytest.approx(expected, abs=1e-12)
    assert report["scores"]["main"]["rows"] == len(TEST)
    quiz = next(s for s in report["stages"] if s["name"] == "quiz")
    assert "f1_macro 1" in quiz["message"]  # the dev predictions are the dev answers
    assert SECRET not in done.stdout + done.stderr


def test_the_board_ranks_a_lower_is_better_metric_by_its_direction(tmp_path: Path) -> None:
    challenge = load_challenge(make_table_challenge(tmp_path / "c", metric="log_loss"))
    assert challenge.leaderboard_direction() is Direction.LOWER
    challenge = load_challenge(make_table_challenge(tmp_path / "d", metric="f1_macro"))
    assert challenge.leaderboard_direction() is Direction.HIGHER


def test_a_missing_id_fails_the_score_stage_as_the_entrys_fault_naming_the_id(
    tmp_path: Path,
) -> None:
    challenge = make_table_challenge(tmp_path / "challenge")
    partial = {key: value for key, value in GUESS.items() if key != "t5"}
    entry = write_prediction(tmp_path / "entry", DEV, partial)
    done = proctor("run", str(entry), "-c", str(challenge), "--json", work_root=tmp_path / "w")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert (report["failed_stage"], report["failure"]) == ("score", "entry")
    score = next(s for s in report["stages"] if s["name"] == "score")
    assert score["message"].startswith("submission.csv: no row for id 't5'")
    assert str(tmp_path) not in done.stdout


def test_a_prediction_without_the_target_column_fails_the_quiz_naming_file_and_fix(
    tmp_path: Path,
) -> None:
    challenge = make_table_challenge(tmp_path / "challenge")
    entry = write_prediction(tmp_path / "entry", DEV, GUESS)
    (entry / "dev" / "main" / "submission.csv").write_text("id,label\nd1,cat\n")
    done = proctor("run", str(entry), "-c", str(challenge), "--json", work_root=tmp_path / "w")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    quiz = next(s for s in report["stages"] if s["name"] == "quiz")
    assert quiz["message"].startswith("dev/main/submission.csv: no column 'target'")
    assert report["failure"] == "entry"


def test_an_unknown_table_metric_is_a_config_error_naming_the_yaml_path(tmp_path: Path) -> None:
    root = make_table_challenge(tmp_path / "challenge")
    spec = yaml.safe_load((root / "challenge.yaml").read_text())
    spec["tasks"][0]["scorer"]["table"]["metric"] = "f2"
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.scorer.*unknown table metric 'f2'") as err:
        load_challenge(root)
    assert "valid string" not in str(err.value)  # the union's other member is not reported


def test_map_at_k_without_k_is_a_config_error(tmp_path: Path) -> None:
    root = make_table_challenge(tmp_path / "challenge", metric="map_at_k")
    with pytest.raises(ConfigError, match="map_at_k needs k"):
        load_challenge(root)


def test_dev_ids_that_do_not_match_fail_the_quiz_as_the_entrys_fault(tmp_path: Path) -> None:
    challenge = make_table_challenge(tmp_path / "challenge")
    entry = write_prediction(tmp_path / "entry", {**DEV, "d9": "cat"}, GUESS)
    done = proctor("run", str(entry), "-c", str(challenge), "--json", work_root=tmp_path / "w")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    quiz = next(s for s in report["stages"] if s["name"] == "quiz")
    assert quiz["message"] == (
        "dev: submission.csv, line 6: id 'd9' is not an id of the test set: leave that row out"
    )
    assert report["failure"] == "entry"
