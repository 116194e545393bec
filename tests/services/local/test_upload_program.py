"""An upload that is its own program (its ``metadata`` names a ``command``), issue 18.

CodaLab's classic code submission: without an ingestion program, the compute worker runs the
upload's command in the prediction step (``/app/program`` = the upload, ``$input`` the input
data, ``$output`` what the scoring program scores). Bundles written for the purpose
(``bundle_fixtures``), imported and run in the real bwrap sandbox; expected scores come from
the bundle's programs run directly. A bundle that gives no sign of taking code stays
``results``, which refuses such an upload at prep instead of scoring it as a result.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from bundle_fixtures import (
    PREDICT_PY,
    V1_PROGRAM_YAML,
    code_zip,
    make_code_bundle,
    make_v1_program_zip,
    make_v1_zip,
    program_zip,
    run_directly,
    submission_zip,
)

from proctor.errors import ConfigError
from proctor.pipeline.report import EvaluationReport
from proctor.protocols.codabench_settings import IngestionProtocol
from proctor.resolve import load_challenge
from proctor.services.local.authoring import check_challenge
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.catalog import write_kit
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import Failure, RunStatus

FAILS_ON_HIDDEN = PREDICT_PY.replace(
    'print("PREDICT-PRINT',
    'assert len(xs) < 3, "PREDICT-SECRET: too many"\nprint("PREDICT-PRINT',
)
"""Runs on the two sample records, fails on the six hidden ones."""
SLOW_ON_HIDDEN = PREDICT_PY.replace(
    'print("PREDICT-PRINT',
    'import time\nif len(xs) > 2:\n    time.sleep(600)\nprint("PREDICT-PRINT',
)
"""Runs on the two sample records, too slow on the six hidden ones."""


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


def _imported(bundle: Path, dest: Path, *, exam: str | None = None) -> Path:
    import_challenge(bundle, dest, "host")
    if exam is not None:
        data = yaml.safe_load((dest / "challenge.yaml").read_text())
        data["disclosure"]["exam"] = exam
        (dest / "challenge.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest


def _stages(report: EvaluationReport) -> dict[str, dict[str, object]]:
    return {stage["name"]: stage for stage in report.to_json()["stages"]}


def _scored_directly(challenge: Path, predictions: str, work: Path) -> dict[str, float]:
    return run_directly(
        challenge / "programs/development",
        challenge / "data/development/reference",
        predictions,
        work,
        ["python3", "/app/program/evaluate.py", "/app/input", "/app/output"],
    )


def _predicted_directly(program: Path, inputs: Path, work: Path) -> str:
    """What the submission's program writes when run as ``python predict.py INPUT OUTPUT``."""
    subprocess.run(
        [sys.executable, program / "predict.py", inputs, work], cwd=program, check=True, timeout=60
    )
    return (work / "predictions.txt").read_text()


# --- the mapping ----------------------------------------------------------------------------


def test_a_bundle_whose_sample_submission_is_a_program_takes_code_with_hidden_input_data(
    tmp_path: Path,
) -> None:
    challenge = tmp_path / "challenge"
    result = import_challenge(make_v1_program_zip(tmp_path), challenge, "host")
    assert any("sample_code_submission.zip" in warning for warning in result.warnings)
    loaded = load_challenge(challenge)
    protocol = loaded.protocol
    assert isinstance(protocol, IngestionProtocol)
    assert protocol.programs == {}
    own = protocol.submission_program_of("development")
    assert own is not None and own.wall_s == 60  # the phase's execution_time_limit
    task = loaded.tasks[0]
    assert task.hidden_inputs == challenge / "data/development/input_data"
    assert task.public_inputs == challenge / "data/development/public"  # the sample data
    assert check_challenge(challenge) == []
    write_kit(str(challenge), tmp_path / "kit")
    assert (tmp_path / "kit/entry/predict.py").read_text() == PREDICT_PY  # the sample program
    kit_inputs = {path.read_text() for path in (tmp_path / "kit").rglob("x.txt")}
    assert kit_inputs == {"7\n9\n"}  # the sample data, never the hidden input data


def test_codalab_is_scoring_only_false_takes_code_and_a_bundle_saying_nothing_takes_results(
    tmp_path: Path,
) -> None:
    scoring_only = V1_PROGRAM_YAML.replace(
        "    starting_kit: sample_code_submission.zip\n", "    is_scoring_only: false\n"
    )
    import_challenge(make_v1_program_zip(tmp_path / "a", scoring_only), tmp_path / "a/c", "host")
    assert load_challenge(tmp_path / "a/c").protocol.kind == "ingestion"
    silent = scoring_only.replace("    is_scoring_only: false\n", "")
    import_challenge(make_v1_program_zip(tmp_path / "b", silent), tmp_path / "b/c", "host")
    loaded = load_challenge(tmp_path / "b/c")
    assert loaded.protocol.kind == "results"
    assert loaded.tasks[0].public_inputs == tmp_path / "b/c/data/development/input_data"


def test_a_task_with_an_ingestion_program_takes_no_submission_program(tmp_path: Path) -> None:
    challenge = tmp_path / "challenge"
    import_challenge(make_code_bundle(tmp_path / "bundle"), challenge, "host")
    text = (challenge / "challenge.yaml").read_text()
    (challenge / "challenge.yaml").write_text(
        text.replace(
            "  programs:\n", "  submission_programs: {alpha-task: {wall_s: 5}}\n  programs:\n"
        )
    )
    with pytest.raises(ConfigError) as caught:
        load_challenge(challenge)
    assert caught.value.location == "protocol.submission_programs.alpha-task"


def test_challenge_check_finds_a_sample_program_a_results_challenge_would_refuse(
    tmp_path: Path,
) -> None:
    challenge = tmp_path / "challenge"
    import_challenge(make_v1_zip(tmp_path), challenge, "host")
    program_zip(tmp_path)  # the folder tmp_path/program
    (tmp_path / "program").rename(challenge / "baseline")
    problems = check_challenge(challenge)
    assert [problem.location for problem in problems] == ["baseline/metadata"]
    assert "takes result submissions" in problems[0].message


# --- runs -----------------------------------------------------------------------------------


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("exam", ["full", "counts"])
def test_a_sample_code_submission_runs_as_its_own_program_and_scores_as_run_directly(
    shared_dir: Path, settings: Settings, exam: str
) -> None:
    challenge = _imported(make_v1_program_zip(shared_dir), shared_dir / "challenge", exam=exam)
    write_kit(str(challenge), shared_dir / "kit")
    report = run_entry(RunRequest(shared_dir / "kit/entry", str(challenge)), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    predictions = _predicted_directly(
        shared_dir / "kit/entry", challenge / "data/development/input_data", shared_dir / "ran"
    )
    assert predictions == "a\nb\nb\na\nb\nb\n"
    expected = _scored_directly(challenge, predictions, shared_dir / "direct")
    assert report.scores["development"] == {"accuracy": expected["accuracy"]} == {"accuracy": 0.5}
    stages = _stages(report)
    assert "python3 /app/program/predict.py /app/input_data /app/output" in str(
        stages["prep"]["message"]
    )
    assert ("PREDICT-PRINT: predicting 6" in str(stages["exam"]["message"])) is (exam == "full")
    assert stages["quiz"]["status"] == "passed"  # the sample data, shown at the quiz's level
    assert "PREDICT-PRINT: predicting 2" in str(stages["quiz"]["message"])


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_same_challenge_scores_a_result_zip_as_it_is(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _imported(make_v1_program_zip(shared_dir), shared_dir / "challenge")
    assert load_challenge(challenge).protocol.kind == "ingestion"  # the code challenge
    predictions = "b\nb\na\nb\na\nb\n"
    report = run_entry(
        RunRequest(submission_zip(shared_dir, predictions), str(challenge)), settings
    )
    assert report.status is RunStatus.SCORED, report.to_json()
    expected = _scored_directly(challenge, predictions, shared_dir / "direct")
    assert report.scores["development"] == {"accuracy": expected["accuracy"]}


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize(
    ("program", "limit", "reason"),
    [(FAILS_ON_HIDDEN, 60, "failed"), (SLOW_ON_HIDDEN, 2, "timed out")],
    ids=["failing", "too-slow"],
)
def test_a_submission_program_failing_on_hidden_data_is_the_entrys_failure(
    shared_dir: Path, settings: Settings, program: str, limit: int, reason: str
) -> None:
    text = V1_PROGRAM_YAML.replace("execution_time_limit: 60", f"execution_time_limit: {limit}")
    bundle = make_v1_program_zip(shared_dir, text)
    challenge = _imported(bundle, shared_dir / "challenge", exam="errors")
    started = time.monotonic()
    report = run_entry(RunRequest(program_zip(shared_dir, program), str(challenge)), settings)
    assert time.monotonic() - started < 30  # the program's own limit, not the stage's
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.ENTRY
    stages = _stages(report)
    assert stages["quiz"]["status"] == "passed"  # two sample records: it ran
    message = str(stages["score"]["message"])
    assert message == (
        f"your program (the command in your metadata) failed: {reason}; nothing it wrote "
        "could be scored"
    )
    assert "PREDICT-SECRET" not in json.dumps(report.to_json())  # exam at errors: fixed texts


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_scoring_program_failing_after_a_good_program_run_is_the_organizers(
    shared_dir: Path, settings: Settings
) -> None:
    broken = "import sys\nprint('SCORER-SECRET')\nsys.exit('broken scorer')\n"
    bundle = make_v1_program_zip(shared_dir, score_py=broken)
    challenge = _imported(bundle, shared_dir / "challenge", exam="full")
    report = run_entry(RunRequest(program_zip(shared_dir), str(challenge)), settings)
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.SCORER
    assert _stages(report)["exam"]["status"] == "passed"
    assert "SCORER-SECRET" not in json.dumps(report.to_json())


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_results_only_bundle_refuses_an_upload_naming_a_command_at_prep(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = shared_dir / "challenge"
    import_challenge(make_v1_zip(shared_dir), challenge, "host")
    assert load_challenge(challenge).protocol.kind == "results"
    report = run_entry(RunRequest(program_zip(shared_dir), str(challenge)), settings)
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.ENTRY
    prep = _stages(report)["prep"]
    assert prep["status"] == "failed"
    assert "takes result submissions" in str(prep["message"])
    assert "upload the files it writes" in str(prep["message"])


@pytest.mark.sandbox
@pytest.mark.slow
def test_an_upload_naming_a_command_beside_an_ingestion_program_is_refused_at_prep(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _imported(make_code_bundle(shared_dir / "bundle"), shared_dir / "challenge")
    code_zip(shared_dir)
    (shared_dir / "code/metadata").write_text("command: python $program/model.py\n")
    report = run_entry(RunRequest(shared_dir / "code", str(challenge)), settings)
    assert report.status is RunStatus.FAILED
    prep = _stages(report)["prep"]
    assert prep["status"] == "failed"
    assert "beside the organizer's ingestion program" in str(prep["message"])
    assert "remove the command from metadata" in str(prep["message"])
