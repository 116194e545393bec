"""A scoring program with ``check: table``: the table's input checks before the program runs.

The organizer's program parses the CSV naively, as a first scoring script does, and would fail
(``E-SCORE``, "your entry is not at fault") on a malformed upload. With ``check: table`` the
upload is checked as the ``table`` scorer checks it, and a malformed one is the entry's failure
with the table's message. Run in the real sandbox.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from table_challenge import DEV, TEST, make_table_challenge, write_prediction

from proctor.errors import ConfigError
from proctor.pipeline.report import EvaluationReport
from proctor.resolve import load_challenge
from proctor.scoring.table import TableOptions
from proctor.services.local.catalog import resolve_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.spec.scorer import ScoringProgram
from proctor.types import Failure, RunStatus

SCORE_PY = """\
import json, os, pathlib
reference = pathlib.Path(os.environ["PROCTOR_REFERENCE"])
outputs = pathlib.Path(os.environ["PROCTOR_OUTPUTS"])
template = os.environ["PROCTOR_OUTPUT_TEMPLATE"]
hits = total = 0
for case in pathlib.Path(os.environ["PROCTOR_CASES_FILE"]).read_text().split():
    solution = (reference / case / "solution.csv").read_text()
    truth = dict(line.split(",") for line in solution.split()[1:])
    output = outputs / template.format(record=case)
    text = (output / "submission.csv" if output.is_dir() else output).read_text()
    guess = dict(line.split(",") for line in text.split()[1:])
    for key, label in truth.items():
        total += 1
        hits += guess[key] == label
scores = pathlib.Path(os.environ["PROCTOR_SCORES_DIR"], "scores.json")
scores.write_text(json.dumps({"acc": hits / total}))
"""

GUESS = {"t1": "cat", "t2": "cat", "t3": "bird", "t4": "dog", "t5": "dog", "t6": "cat"}


def _program_challenge(root: Path, **check: Any) -> Path:
    folder = make_table_challenge(root)
    (folder / "scoring").mkdir()
    (folder / "scoring" / "score.py").write_text(SCORE_PY)
    spec = yaml.safe_load((folder / "challenge.yaml").read_text())
    spec["tasks"][0]["scorer"] = {
        "program": "scoring",
        "command": ["python3", "score.py"],
        "metrics": {"acc": {"direction": "higher", "description": "share of right labels"}},
        "limits": {"wall_s": 30, "memory_bytes": 512 * 2**20},
        **check,
    }
    spec["leaderboard"] = {"metric": "acc"}
    spec["environment"] = "host"
    (folder / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return folder


TABLE_CHECK = {"check": "table", "table": {"prediction": "submission.csv", "metrics": ["accuracy"]}}


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


def _stage(report: EvaluationReport, name: str) -> dict[str, Any]:
    return next(s for s in report.to_json()["stages"] if s["name"] == name)


def test_check_table_loads_the_tables_options_into_the_program(tmp_path: Path) -> None:
    challenge = load_challenge(_program_challenge(tmp_path / "c", **TABLE_CHECK))
    program = challenge.tasks[0].scorer
    assert isinstance(program, ScoringProgram)
    assert isinstance(program.check, TableOptions)
    assert program.check.metric_names == ("accuracy",)
    assert program.check_command is None
    assert challenge.tasks[0].reported_metrics == ("acc",)


def test_check_table_without_its_block_takes_the_tables_defaults(tmp_path: Path) -> None:
    challenge = load_challenge(_program_challenge(tmp_path / "c", check="table"))
    program = challenge.tasks[0].scorer
    assert isinstance(program, ScoringProgram) and isinstance(program.check, TableOptions)
    assert (program.check.prediction, program.check.id) == ("submission.csv", "id")


@pytest.mark.parametrize(
    ("check", "where", "message"),
    [
        ({"check": "tables"}, r"scorer\.check", "unknown check 'tables'"),
        ({"check": "table", "table": {"metrics": ["f2"]}}, r"scorer\.table", "unknown table"),
        ({"check": "table", "table": {"predicton": "x.csv"}}, r"scorer\.table", "unknown key"),
        ({"check": []}, r"scorer\.check", "an empty command"),
    ],
)
def test_a_bad_check_names_its_yaml_path(
    tmp_path: Path, check: dict[str, Any], where: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=rf"tasks\[0\]\.{where}") as caught:
        load_challenge(_program_challenge(tmp_path / "c", **check))
    assert message in str(caught.value)


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_good_upload_is_scored_by_the_organizers_program(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _program_challenge(shared_dir / "challenge", **TABLE_CHECK)
    entry = write_prediction(shared_dir / "entry", DEV, GUESS)
    report = run_entry(RunRequest(entry, str(challenge)), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    right = sum(GUESS[key] == label for key, label in TEST.items())
    assert report.scores["main"]["acc"] == pytest.approx(right / len(TEST))


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_malformed_csv_is_the_entrys_failure_with_the_tables_message(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _program_challenge(shared_dir / "challenge", **TABLE_CHECK)
    entry = write_prediction(shared_dir / "entry", DEV, GUESS)
    malformed = entry / "test" / "main" / "submission.csv"
    malformed.write_text(malformed.read_text().replace("t3,bird", "t3,bird,extra"))
    report = run_entry(RunRequest(entry, str(challenge)), settings)
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.ENTRY, report.to_json()
    message = _stage(report, report.failed_stage or "")["message"]
    assert "submission.csv, line 4: 3 fields where the header has 2" in message, message


@pytest.mark.sandbox
@pytest.mark.slow
def test_ids_unlike_the_solutions_are_the_entrys_failure_before_the_program_runs(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _program_challenge(shared_dir / "challenge", **TABLE_CHECK)
    partial = {key: value for key, value in GUESS.items() if key != "t5"}
    entry = write_prediction(shared_dir / "entry", DEV, partial)
    report = run_entry(RunRequest(entry, str(challenge)), settings)
    assert (report.status, report.failure) == (RunStatus.FAILED, Failure.ENTRY), report.to_json()
    assert report.failed_stage == "score"
    assert _stage(report, "score")["message"].startswith("submission.csv: no row for id 't5'")


@pytest.mark.sandbox
@pytest.mark.slow
def test_without_the_check_the_same_upload_fails_the_organizers_program(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _program_challenge(shared_dir / "challenge")
    partial = {key: value for key, value in GUESS.items() if key != "t5"}
    entry = write_prediction(shared_dir / "entry", DEV, partial)
    report = run_entry(RunRequest(entry, str(challenge)), settings)
    assert (report.status, report.failure) == (RunStatus.FAILED, Failure.SCORER)


def test_check_table_needs_each_hidden_solution_before_anything_runs(tmp_path: Path) -> None:
    folder = _program_challenge(tmp_path / "c", **TABLE_CHECK)
    (folder / "data" / "test-reference" / "main" / "solution.csv").unlink()
    with pytest.raises(ConfigError, match=r"main/solution\.csv"):
        resolve_challenge(str(folder))
