"""Imported bundles' programs against their environment: what it lacks, said before a run.

Bundles written for the purpose (``chalearn_bundle``): a ChaLearn-style ingestion whose
``data_io.py`` imports ``pkg_resources``, a scoring program importing ``filelock`` and ``yaml``,
and an image Proctor does not know (an organizer's own, as ``vergilgxw/autotable:v2`` was).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from bundle_fixtures import score_task_directly
from chalearn_bundle import PREDICTED, make_chalearn_bundle, make_importing_bundle, model_folder
from typer.testing import CliRunner

from proctor.cli.main import build_app
from proctor.services.local.authoring import check_challenge
from proctor.services.local.bundle_import import import_challenge

PROCTOR = Path(sys.executable).parent / "proctor"


def _declared(folder: Path, requirements: str) -> Path:
    """A folder declaring an environment with ``requirements`` (no lock: check says so)."""
    folder.mkdir(parents=True)
    (folder / "environment.yaml").write_text(
        "name: mine\ndebian: {suite: bookworm, packages: [python3]}\n"
        "python: {requirements: requirements.in, lock: requirements.lock}\n"
    )
    (folder / "requirements.in").write_text(requirements)
    return folder


def test_check_lists_a_scoring_import_the_environment_lacks_with_the_fix(tmp_path: Path) -> None:
    challenge = tmp_path / "challenge"
    result = import_challenge(make_importing_bundle(tmp_path / "bundle"), challenge)
    noted = [w for w in result.warnings if "imports filelock" in w]
    assert noted and noted[0].startswith("programs/alpha-task/score.py:1: the scoring program")
    problems = check_challenge(challenge)
    assert [(p.location, "filelock" in p.message) for p in problems] == [
        ("programs/alpha-task/score.py:1", True),
        ("programs/beta-task/score.py:1", True),
    ]
    message = problems[0].message
    assert "environment 'codabench-legacy' does not have" in message
    assert "add filelock to environment/requirements.in" in message
    assert "--environment DIR" in message
    assert not any("imports yaml" in p.message for p in problems)  # pyyaml: codabench-legacy
    done = CliRunner().invoke(build_app(), ["challenge", "check", str(challenge)])
    assert done.exit_code == 2
    assert "score.py:1: the scoring program imports filelock" in done.output


def test_a_declared_environment_names_its_own_requirements_and_the_distribution(
    tmp_path: Path,
) -> None:
    declared = _declared(tmp_path / "env", "numpy\n")
    challenge = tmp_path / "challenge"
    import_challenge(make_chalearn_bundle(tmp_path / "bundle"), challenge, str(declared))
    found = {(p.location, p.message) for p in check_challenge(challenge)}
    lock = "environment/requirements.lock"
    assert any(where == lock and "has no wheel lock" in text for where, text in found)
    gaps = sorted(where for where, _ in found if where != lock)
    assert gaps == ["programs/alpha-task-ingestion/data_io.py:4"]  # model: the submission's
    text = next(text for where, text in found if where != lock)
    assert text.startswith("the ingestion program imports pkg_resources")
    assert (
        f"add setuptools to environment/requirements.in, then `proctor env lock {challenge}`"
        in text
    )


def test_an_unknown_image_gets_an_environment_scaffolded_from_the_imports(tmp_path: Path) -> None:
    challenge = tmp_path / "challenge"
    bundle = make_importing_bundle(tmp_path / "bundle", "vergilgxw/autotable:v2")
    result = import_challenge(bundle, challenge)
    assert result.warnings[0].startswith(
        "environment: the declared environment 'image-vergilgxw-autotable-v2' (environment/), "
        "scaffolded for docker_image vergilgxw/autotable:v2"
    )
    requirements = (challenge / "environment/requirements.in").read_text()
    assert "programs/alpha-task, programs/beta-task" in requirements
    listed = [line for line in requirements.splitlines() if not line.startswith("#")]
    assert listed == ["filelock", "pyyaml"]
    declaration = yaml.safe_load((challenge / "environment/environment.yaml").read_text())
    assert declaration["debian"]["packages"] == ["python3", "python-is-python3"]
    written = yaml.safe_load((challenge / "challenge.yaml").read_text())["environment"]
    assert written["name"] == "image-vergilgxw-autotable-v2"
    assert written["python"]["requirements"] == "environment/requirements.in"
    problems = check_challenge(challenge)
    assert [p.location for p in problems] == ["environment/requirements.lock"]
    assert f"`proctor env lock {challenge}`" in problems[0].message
    chosen = import_challenge(bundle, tmp_path / "chosen", "codabench")  # the organizer chose
    assert not (tmp_path / "chosen/environment").exists()
    assert chosen.warnings[0].startswith("environment: codabench (docker_image vergilgxw/")


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.environment
def test_a_chalearn_data_io_importing_pkg_resources_scores_in_codabench_legacy(
    shared_dir: Path,
) -> None:
    challenge = shared_dir / "challenge"
    bundle = make_chalearn_bundle(shared_dir / "bundle")
    imported = subprocess.run(
        [str(PROCTOR), "challenge", "import", str(bundle), str(challenge), "--json"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    answer = json.loads(imported.stdout)
    assert answer["warnings"][0].startswith("environment: codabench-legacy (no docker_image")
    assert not any("imports" in warning for warning in answer["warnings"])
    checked = subprocess.run(
        [str(PROCTOR), "challenge", "check", str(challenge)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    env = {**os.environ, "PROCTOR_WORK_ROOT": str(shared_dir / "runs")}
    done = subprocess.run(
        [str(PROCTOR), "run", str(model_folder(shared_dir / "entry")), "-c", str(challenge),
         "--json", "--keep"],
        capture_output=True, text=True, env=env, check=False, timeout=1800,
    )  # fmt: skip
    report = json.loads(done.stdout)
    assert done.returncode == 0, (report, done.stderr)
    assert report["status"] == "scored"
    expected = score_task_directly(challenge, "alpha-task", PREDICTED, shared_dir / "direct")
    assert report["scores"]["alpha-task"]["accuracy"] == expected["accuracy"]
