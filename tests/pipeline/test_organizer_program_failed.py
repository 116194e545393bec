"""Blame where it belongs under an ingestion program (issue 27), in the real sandbox.

A ChaLearn-style ingestion program whose own ``data_io.py`` imports a module the environment
lacks fails before the participant's code runs: the organizer's failure (``scorer``), E-SCORE
for the participant, the reason in the organizer's log. A failure in or because of the
participant's code stays the entry's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from bundle_fixtures import MODEL_PY, code_zip, make_beside_bundle, make_code_bundle, submission_zip

from proctor.pipeline.report import EvaluationReport
from proctor.services.local.authoring import check_challenge
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import Failure, RunStatus

CHALEARN_INGESTION = """\
import sys
from pathlib import Path
inputs, output, code = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
sys.path.append(code)
import data_io
from model import predict
xs = (inputs / "x.txt").read_text().split()
(output / "predictions.txt").write_text("".join(predict(x) + "\\n" for x in xs))
"""

DATA_IO = "import os\nimport not_installed_module\n"
PROCTOR = Path(sys.executable).parent / "proctor"


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


def _challenge(shared_dir: Path, *, public_data: bool = False, **files: str) -> Path:
    challenge = shared_dir / "challenge"
    bundle = make_code_bundle(shared_dir / "bundle", public_data=public_data)
    import_challenge(bundle, challenge, "host")
    program = challenge / "programs" / "alpha-task-ingestion"
    for name, text in files.items():
        (program / f"{name}.py").write_text(text)
    return challenge


def _run(upload: Path, challenge: Path, settings: Settings) -> EvaluationReport:
    return run_entry(RunRequest(upload, str(challenge), keep=True), settings)


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("public_data", [False, True], ids=["exam", "quiz"])
def test_the_ingestion_programs_own_import_is_the_organizers_failure(
    shared_dir: Path, settings: Settings, public_data: bool
) -> None:
    challenge = _challenge(
        shared_dir, public_data=public_data, ingestion=CHALEARN_INGESTION, data_io=DATA_IO
    )
    report = _run(code_zip(shared_dir), challenge, settings)
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.SCORER, report.to_json()
    shown = json.dumps(report.to_json())
    assert "E-SCORE" in shown and "not at fault" in shown
    assert "not_installed_module" not in shown and "Traceback" not in shown
    assert "your code failed" not in shown
    assert report.run_dir is not None
    kept = (report.run_dir / "score-error.txt").read_text()
    assert "No module named 'not_installed_module'" in kept and "data_io.py:2" in kept
    assert "Traceback" in (report.run_dir / "scoring-alpha-task.log").read_text()


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_missing_participant_module_stays_the_entrys_failure(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _challenge(shared_dir, ingestion=CHALEARN_INGESTION)
    upload = shared_dir / "no-model.zip"
    with zipfile.ZipFile(upload, "w") as archive:
        archive.writestr("readme.txt", "I forgot model.py\n")
    report = _run(upload, challenge, settings)
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.ENTRY, report.to_json()
    assert "failed under the ingestion program" in json.dumps(report.to_json())


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_programs_crash_on_what_the_participants_code_returned_is_the_entrys(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _challenge(shared_dir, ingestion=CHALEARN_INGESTION, data_io="import os\n")
    returns_a_number = "def predict(x):\n    return 5\n"  # the program's str + "\n" fails
    report = _run(code_zip(shared_dir, returns_a_number), challenge, settings)
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.ENTRY, report.to_json()


@pytest.mark.sandbox
@pytest.mark.slow
def test_an_ingestion_command_the_environment_lacks_is_the_organizers(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _challenge(shared_dir)
    spec = challenge / "challenge.yaml"
    text = spec.read_text()
    spec.write_text(
        text.replace(
            "- python3\n      - /app/program/ingestion.py",
            "- no-such-python\n      - /app/program/ingestion.py",
            1,
        )
    )
    assert "no-such-python" in spec.read_text()
    report = _run(code_zip(shared_dir), challenge, settings)
    assert report.failure is Failure.SCORER, report.to_json()
    assert report.run_dir is not None
    assert "'no-such-python' cannot start" in (report.run_dir / "score-error.txt").read_text()


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_concurrent_ingestions_own_import_is_the_organizers(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = shared_dir / "challenge"
    import_challenge(make_beside_bundle(shared_dir / "bundle", limit=5), challenge, "host")
    ingestion = challenge / "programs" / "alpha-task-ingestion" / "ingest_beside.py"
    ingestion.write_text("import not_installed_module\n" + ingestion.read_text())
    report = _run(code_zip(shared_dir), challenge, settings)
    assert report.failure is Failure.SCORER, report.to_json()
    assert "not_installed_module" not in json.dumps(report.to_json())
    assert report.run_dir is not None
    kept = (report.run_dir / "score-error.txt").read_text()
    assert "before the participant's code ran" in kept and "not_installed_module" in kept


@pytest.mark.sandbox
@pytest.mark.slow
def test_proctor_run_and_check_name_the_organizers_program(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _challenge(shared_dir, ingestion=CHALEARN_INGESTION, data_io=DATA_IO)
    env = {**os.environ, "PROCTOR_WORK_ROOT": str(settings.work_root)}
    argv = [str(PROCTOR), "run", str(code_zip(shared_dir)), "--challenge", str(challenge)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "E-SCORE" in done.stdout and "not_installed_module" not in done.stdout
    problems = check_challenge(challenge, settings, run=True)
    assert [p.location for p in problems] == ["baseline", "kit/solutions/sample"], problems
    assert all("the organizer's program" in p.message for p in problems)
    assert "No module named 'not_installed_module'" in problems[0].message


@pytest.mark.sandbox
@pytest.mark.slow
def test_code_with_metadata_is_not_scored_after_the_organizers_failure(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _challenge(shared_dir, ingestion=CHALEARN_INGESTION, data_io=DATA_IO)
    upload = shared_dir / "code-with-metadata.zip"
    with zipfile.ZipFile(upload, "w") as archive:
        archive.writestr("model.py", MODEL_PY)
        archive.writestr("metadata", "description: my model\n")
    report = _run(upload, challenge, settings)
    assert report.failure is Failure.SCORER, report.to_json()
    assert report.run_dir is not None
    assert not list(report.run_dir.glob("detailed_results-*"))  # the scoring program never ran
    assert "before your code ran" in json.dumps(report.to_json())


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_result_zip_is_scored_as_uploaded_with_the_organizers_warning(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = _challenge(shared_dir, ingestion=CHALEARN_INGESTION, data_io=DATA_IO)
    report = _run(submission_zip(shared_dir), challenge, settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.run_dir is not None
    log = (report.run_dir / "scoring-alpha-task.log").read_text()
    assert "the organizer's program failed before the entry's code ran" in log
    assert "scored as uploaded" in log
