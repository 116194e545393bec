"""The ``scorer:`` key: built-in names and scoring programs, and the errors an organizer sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from proctor.errors import ConfigError
from proctor.resolve import load_challenge
from proctor.spec.scorer import ScoringProgram
from proctor.types import Direction


def write(root: Path, scorer: Any, **extra: Any) -> Path:
    for folder in ("public", "hidden", "refs", "scoring"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    spec = {
        "name": "c",
        "title": "C",
        "protocol": {"kind": "records"},
        "tasks": [
            {
                "name": "t",
                "public_inputs": "public",
                "hidden_inputs": "hidden",
                "hidden_references": "refs",
                "scorer": scorer,
            }
        ],
        "phases": [{"name": "final", "tasks": ["t"]}],
        **extra,
    }
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return root


PROGRAM = {
    "program": "scoring",
    "command": ["python3", "score.py"],
    "metrics": {"mae": {"direction": "lower", "description": "mean absolute error"}},
}


def test_a_scoring_program_loads_with_its_metrics_and_an_absolute_folder(tmp_path: Path) -> None:
    challenge = load_challenge(write(tmp_path, PROGRAM, leaderboard={"metric": "mae"}))
    task = challenge.tasks[0]
    assert isinstance(task.scorer, ScoringProgram)
    assert task.scorer.program == (tmp_path / "scoring").resolve()
    assert task.reported_metrics == ("mae",)
    assert challenge.leaderboard_direction() is Direction.LOWER
    assert task.scorer.mounts.reference == "/scoring/reference"


def test_an_unknown_scorer_is_one_error_not_two(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_challenge(write(tmp_path, "macro_f1"))
    message = str(caught.value)
    assert "tasks[0].scorer" in message
    assert "unknown scorer 'macro_f1'" in message
    assert "scoring program" in message
    assert "at least 1 item" not in message


@pytest.mark.parametrize(
    ("change", "location", "words"),
    [
        ({"command": []}, "tasks[0].scorer.command", "at least 1 item"),
        ({"metrics": {}}, "tasks[0].scorer.metrics", "at least 1 item"),
        ({"metrics": {"m": {"direction": "up"}}}, "tasks[0].scorer.metrics.m.direction", "higher"),
        (
            {"metrics": {"cases": {"direction": "higher"}}},
            "tasks[0].scorer.metrics.cases",
            "not 'cases'",
        ),
        ({"program": "../elsewhere"}, "tasks[0].scorer.program", "without '..'"),
        ({"program": "missing"}, "tasks[0].scorer.program", "does not exist"),
        ({"mounts": {"reference": "/etc/ref"}}, "tasks[0].scorer.mounts.reference", "/etc"),
        ({"limits": {"wall_s": 0}}, "tasks[0].scorer.limits.wall_s", "greater than 0"),
        ({"typo": 1}, "tasks[0].scorer.typo", "unknown key"),
        ({"kind": "tabular"}, "tasks[0].scorer.kind", "unknown scorer kind 'tabular'"),
    ],
)
def test_a_bad_program_names_the_yaml_path_and_the_fix(
    tmp_path: Path, change: dict[str, Any], location: str, words: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_challenge(write(tmp_path, {**PROGRAM, **change}))
    assert caught.value.location == location, str(caught.value)
    assert words in str(caught.value)
    assert "problems" not in str(caught.value)  # one error, no echo of it on ``tasks``


def test_a_metric_the_program_does_not_declare_cannot_rank(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not report 'f1'"):
        load_challenge(write(tmp_path, PROGRAM, leaderboard={"metric": "f1"}))


def test_a_program_may_name_a_check_kind_with_its_block(tmp_path: Path) -> None:
    scorer = {**PROGRAM, "check": "table", "table": {"prediction": "pred.csv", "id": "key"}}
    program = load_challenge(write(tmp_path, scorer)).tasks[0].scorer
    assert isinstance(program, ScoringProgram)
    assert program.check_command is None
    assert program.check is not None and not isinstance(program.check, tuple)
    assert program.check.model_dump()["prediction"] == "pred.csv"
    assert program.check.model_dump()["id"] == "key"


def test_a_check_command_stays_a_command(tmp_path: Path) -> None:
    program = load_challenge(write(tmp_path, {**PROGRAM, "check": ["python3", "check.py"]}))
    scorer = program.tasks[0].scorer
    assert isinstance(scorer, ScoringProgram)
    assert scorer.check_command == ("python3", "check.py")


def test_an_unknown_check_kind_names_the_yaml_path_and_the_kinds(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.scorer\.check") as caught:
        load_challenge(write(tmp_path, {**PROGRAM, "check": "csv"}))
    assert "unknown check 'csv'" in str(caught.value)
    assert "table" in str(caught.value)


def test_a_check_kinds_block_that_is_no_mapping_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.scorer\.table"):
        load_challenge(write(tmp_path, {**PROGRAM, "check": "table", "table": "submission.csv"}))
