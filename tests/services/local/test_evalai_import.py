"""EvalAI challenges imported by ``proctor challenge import`` and scored by the ``evalai`` scorer.

``tests/support/evalai_challenge.py`` writes a starter-like challenge (CRLF, a duplicate key, the
YAML
naming ``evaluation_script.zip`` while the folder holds ``evaluation_script/``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from evalai_challenge import (
    SECRET,
    SUBMISSION,
    evaluate_directly,
    make_evalai_challenge,
    make_upload,
)
from paths import BUNDLED_ENV

from proctor.environments.store import BuiltEnvironment
from proctor.errors import ConfigError
from proctor.resolve import load_challenge
from proctor.scoring.evalai import EvalaiScorer
from proctor.services.local.authoring import check_challenge
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import Failure, RunStatus

PROCTOR = Path(sys.executable).parent / "proctor"


def imported(root: Path, environment: str | None = "host") -> Path:
    source = make_evalai_challenge(root / "source")
    import_challenge(source, root / "challenge", environment)
    return root / "challenge"


def test_the_cli_imports_a_challenge_folder_and_prints_the_mapping(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    done = subprocess.run(
        [str(PROCTOR), "challenge", "import", str(source), str(tmp_path / "dest"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["format"] == "evalai"
    assert answer["challenge"] == "toy-accuracy-challenge-evalai"  # the duplicate title: last
    assert [phase["name"] for phase in answer["phases"]] == ["dev", "test"]
    tasks = [task["name"] for task in answer["tasks"]]
    assert tasks == ["dev-train-split", "test-train-split", "test-test-split"]
    boards = [(board["phase"], board["name"]) for board in answer["leaderboards"]]
    assert boards == [("dev", "leaderboard-1"), ("test", "leaderboard-1")]
    assert any("max_submissions_per_month" in warning for warning in answer["warnings"])
    assert check_challenge(tmp_path / "dest") == []


def test_phases_splits_and_leaderboards_map_to_phases_tasks_and_boards(tmp_path: Path) -> None:
    challenge = load_challenge(imported(tmp_path, environment=None))
    test = challenge.phase("test")
    assert test.title == "Test Phase"
    assert test.tasks == ("test-train-split", "test-test-split")
    assert test.opens is not None and test.opens.isoformat() == "2019-01-19T00:00:00+00:00"
    assert test.quota is not None and test.quota.per_day == 3 and test.quota.total is None
    dev = challenge.phase("dev")
    assert dev.quota is not None and (dev.quota.per_day, dev.quota.total) == (5, 50)
    (board,) = test.leaderboards
    assert board.metrics == ("Accuracy", "Errors")  # default_order_by first
    assert board.public is False  # one of its splits is visible to the host only
    scorer = challenge.task("test-test-split").scorer
    assert isinstance(scorer, EvalaiScorer)
    assert (scorer.phase, scorer.split, scorer.annotation) == ("test", "test_split", "test.json")
    directions = {name: metric.direction.value for name, metric in scorer.metrics.items()}
    assert directions == {"Accuracy": "higher", "Errors": "lower"}
    assert isinstance(scorer.environment, object) and scorer.environment is not None
    assert "codabench" in str(scorer.environment)  # EvalAI scripts run in codabench by default


def test_a_zipped_challenge_with_only_the_zipped_script_imports(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    script = source / "evaluation_script"
    with zipfile.ZipFile(source / "evaluation_script.zip", "w") as archive:
        for path in script.iterdir():
            archive.write(path, path.name)
    shutil.rmtree(script)
    bundle = tmp_path / "bundle.zip"
    with zipfile.ZipFile(bundle, "w") as archive:
        for path in sorted(source.rglob("*")):
            archive.write(path, f"toy/{path.relative_to(source)}")
    result = import_challenge(bundle, tmp_path / "dest", "host")
    assert result.format == "evalai"
    assert (tmp_path / "dest/evaluation_script/main.py").is_file()
    assert check_challenge(tmp_path / "dest") == []


def test_untranslatable_inputs_are_refused_naming_the_key(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    config = source / "challenge_config.yaml"
    config.write_bytes(
        config.read_bytes().replace(b"remote_evaluation: False", b"remote_evaluation: True")
    )
    with pytest.raises(ConfigError, match="remote_evaluation") as caught:
        import_challenge(source, tmp_path / "dest")
    assert "set `remote_evaluation: False` and import again" in str(caught.value)  # the fix
    config.write_bytes(
        config.read_bytes().replace(b"remote_evaluation: True", b"remote_evaluation: False")
    )
    (source / "annotations/test.json").unlink()
    with pytest.raises(ConfigError, match="test_annotation_file"):
        import_challenge(source, tmp_path / "dest2")


def test_templates_become_pages_and_decimal_precision_the_digits(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    config = source / "challenge_config.yaml"
    config.write_bytes(
        config.read_bytes().replace(
            b"    visibility: 1", b"    visibility: 1\n    leaderboard_decimal_precision: 2"
        )
    )
    result = import_challenge(source, tmp_path / "dest", "host")
    challenge = load_challenge(tmp_path / "dest")
    assert challenge.pages == {"overview": "pages/description.html"}
    assert (tmp_path / "dest/pages/description.html").read_text().startswith("<p>Guess")
    assert (challenge.digits("Accuracy"), challenge.digits("Errors")) == (2, 2)
    assert not any("precision" in warning for warning in result.warnings)


def test_a_folder_declaring_an_environment_is_the_scorers_environment(tmp_path: Path) -> None:
    bundled = BUNDLED_ENV
    folder = tmp_path / "env"
    folder.mkdir()
    declaration = {
        "name": "proctor-reference",
        "debian": {"suite": "bookworm", "packages": ["python3"]},
        "python": {
            "requirements": str(bundled / "requirements.in"),
            "lock": str(bundled / "requirements.lock"),
        },
        "lock": str(bundled / "environment.lock"),
    }
    (folder / "environment.yaml").write_text(yaml.safe_dump(declaration))
    source = make_evalai_challenge(tmp_path / "source")
    import_challenge(source, tmp_path / "dest", str(folder))
    assert (tmp_path / "dest/environment/environment.yaml").is_file()
    assert check_challenge(tmp_path / "dest") == []
    scorer = load_challenge(tmp_path / "dest").task("dev-train-split").scorer
    assert isinstance(scorer, EvalaiScorer)
    assert getattr(scorer.environment, "name", None) == "proctor-reference"


def test_a_label_that_is_no_metric_name_keeps_its_label(tmp_path: Path) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    config = source / "challenge_config.yaml"
    config.write_bytes(config.read_bytes().replace(b'"Errors"', b'"Error-count"'))
    import_challenge(source, tmp_path / "dest", "host")
    scorer = load_challenge(tmp_path / "dest").task("dev-train-split").scorer
    assert isinstance(scorer, EvalaiScorer)
    assert scorer.labels == {"Error_count": "Error-count"}
    assert scorer.metrics["Error_count"].direction.value == "lower"


# --- the evaluation script in the sandbox --------------------------------------------------


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_submission_scores_what_the_script_computes_when_called_directly(
    shared_dir: Path,
) -> None:
    challenge = imported(shared_dir)
    upload = make_upload(shared_dir / "upload")
    settings = Settings(work_root=shared_dir / "runs")
    report = run_entry(RunRequest(upload, str(challenge), phase="test", keep=True), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    direct = evaluate_directly(
        challenge / "evaluation_script",
        shared_dir / "source/annotations/test.json",
        upload / "guesses.json",
        "test",
    )
    expected = {
        f"test-{split}": {"Accuracy": labels["Accuracy"], "Errors": labels["Errors"]}
        for item in direct["result"]
        for split, labels in item.items()
    }
    expected = {name.replace("_", "-"): value for name, value in expected.items()}
    assert report.scores == expected
    assert 0 < report.scores["test-test-split"]["Accuracy"] < 1
    assert report.run_dir is not None
    log = (report.run_dir / "scoring-test-test-split.log").read_text()
    assert "submission_result" in log  # kept for the organizer
    assert "'Extra' is not a metric the YAML declares" in log  # kept in the log, no failure


BAD_SCRIPTS = {
    "raises": "def evaluate(*args, **kwargs):\n"
    f"    print('{SECRET}')\n    raise RuntimeError('script bug {SECRET}')\n",
    "sleeps past its limit": "import time\n\ndef evaluate(*args, **kwargs):\n"
    f"    print('{SECRET}', flush=True)\n    time.sleep(120)\n",
    "returns no result": "def evaluate(*args, **kwargs):\n"
    f"    print('{SECRET}')\n    return {{}}\n",
}
REASONS = {
    "raises": "exited with status 1",
    "sleeps past its limit": "timed out",
    "returns no result": "exited with status 2",
}


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("behaviour", list(BAD_SCRIPTS))
def test_a_failing_script_is_a_scorer_failure_with_the_organizers_log(
    shared_dir: Path, behaviour: str
) -> None:
    source = make_evalai_challenge(shared_dir / "source", main_py=BAD_SCRIPTS[behaviour])
    challenge = shared_dir / "challenge"
    import_challenge(source, challenge, "host")
    spec = yaml.safe_load((challenge / "challenge.yaml").read_text())
    for task in spec["tasks"]:
        task["scorer"]["limits"] = {"wall_s": 5}
    (challenge / "challenge.yaml").write_text(yaml.safe_dump(spec))
    upload = make_upload(shared_dir / "upload", SUBMISSION)
    env = {**os.environ, "PROCTOR_WORK_ROOT": str(shared_dir / "runs")}
    done = subprocess.run(
        [
            str(PROCTOR),
            "run",
            str(upload),
            "-c",
            str(challenge),
            "--phase",
            "dev",
            "--json",
            "--keep",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["failure"] == Failure.SCORER
    for text in (done.stdout, done.stderr):
        assert SECRET not in text
        assert "Traceback" not in text
    run_dir = Path(
        next(line for line in done.stderr.splitlines() if "run folder" in line).split(": ", 1)[1]
    )
    log = (run_dir / "score-error.txt").read_text() + (
        run_dir / "scoring-dev-train-split.log"
    ).read_text()
    assert REASONS[behaviour] in log
    assert SECRET in log  # the organizer sees what the script printed


# --- the bundled environments ---------------------------------------------------------------

NP_FLOAT_SCRIPT = """\
import json
import numpy as np


def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):
    truth = json.load(open(test_annotation_file))["train_split"]
    guesses = json.load(open(user_submission_file))
    right = np.sum([guesses.get(key) == label for key, label in truth.items()], dtype=np.float)
    return {"result": [{"train_split": {"Accuracy": right / len(truth), "Errors": 0}}]}
"""


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.environment
def test_np_float_works_in_codabench_legacy_and_not_in_codabench(
    shared_dir: Path,
    codabench_env: BuiltEnvironment,
    codabench_legacy_env: BuiltEnvironment,
) -> None:
    wheels = {name: version for name, (version, _) in codabench_legacy_env.manifest.wheels.items()}
    assert wheels["numpy"] == "1.23.5" and wheels["pandas"] == "1.5.3"
    modern = {name: version for name, (version, _) in codabench_env.manifest.wheels.items()}
    assert modern["numpy"] == "1.26.4" and modern["scikit-learn"] == "1.5.1"
    assert modern["numba"] == "0.61.2" and modern["psutil"] == "7.0.0"  # the py312 image's
    source = make_evalai_challenge(shared_dir / "source", main_py=NP_FLOAT_SCRIPT)
    upload = make_upload(shared_dir / "upload")
    outcomes = {}
    for name in ("codabench-legacy", "codabench"):
        challenge = shared_dir / name
        import_challenge(source, challenge, name)
        settings = Settings(work_root=shared_dir / f"runs-{name}")
        request = RunRequest(upload, str(challenge), phase="dev", keep=True)
        outcomes[name] = run_entry(request, settings)
    legacy = outcomes["codabench-legacy"]
    assert legacy.status is RunStatus.SCORED, legacy.to_json()
    assert legacy.scores["dev-train-split"]["Accuracy"] == 0.5
    modern_report = outcomes["codabench"]
    assert modern_report.failure is Failure.SCORER
    assert modern_report.run_dir is not None
    log = (modern_report.run_dir / "scoring-dev-train-split.log").read_text()
    assert "np.float" in log or "has no attribute 'float'" in log


def test_an_upload_of_two_files_is_the_entrys_failure_at_prep(tmp_path: Path) -> None:
    challenge = imported(tmp_path)
    upload = make_upload(tmp_path / "upload")
    (upload / "notes.json").write_text("{}")
    settings = Settings(work_root=tmp_path / "runs")
    report = run_entry(RunRequest(upload, str(challenge), phase="dev"), settings)
    assert report.failure is Failure.ENTRY
    assert "must be one file" in report.to_json()["stages"][0]["message"]
