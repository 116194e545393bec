"""Public example bundles (e.g. codalab/competition-examples' codabench/ and codalab/ folders),
imported and scored in the sandbox: each result-submission sample scores exactly what the
bundle's own scoring program computes when run directly (outside any sandbox, its /app paths
pointed at a temporary layout). Nothing of those bundles is part of this repository: set
PROCTOR_BUNDLE_EXAMPLES to a folder holding them (searched for competition.yaml); skipped
otherwise. The programs run in the reference environment (numpy, scipy, scikit-learn...).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from proctor.errors import ConfigError
from proctor.pipeline.report import EvaluationReport
from proctor.services.local.bundle_import import import_bundle
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.spec.loader import load_challenge
from proctor.spec.model import Task
from proctor.spec.scorer import ScoringProgram
from proctor.types import Failure, RunStatus

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
ROOT = os.environ.get("PROCTOR_BUNDLE_EXAMPLES", "")
BUNDLED = Path(__file__).resolve().parents[1] / "src/proctor/challenges/environment"


def _bundles() -> list[Path]:
    if not ROOT:
        return []
    return sorted(path.parent for path in Path(ROOT).rglob("competition.yaml"))


def _environment(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    declaration = {
        "name": "proctor-reference",
        "debian": {"suite": "bookworm", "packages": ["python3", "gcc"]},
        "python": {
            "requirements": str(BUNDLED / "requirements.in"),
            "lock": str(BUNDLED / "requirements.lock"),
        },
        "lock": str(BUNDLED / "environment.lock"),
    }
    (folder / "environment.yaml").write_text(yaml.safe_dump(declaration))
    return folder


def _direct(
    scorer: ScoringProgram, references: Path, upload: Path, work: Path
) -> dict[str, float] | None:
    """The program run directly, every ``/app/...`` path (in its files too) made a real one.

    None when it fails or writes no scores.
    """
    places = {
        "/app/input/ref": work / "input/ref",
        "/app/input/res": work / "input/res",
        "/app/input": work / "input",
        "/app/output": work / "output",
        "/app/program": work / "program",
    }
    shutil.copytree(scorer.program, work / "program")
    shutil.copytree(references, work / "input/ref")
    shutil.copytree(upload, work / "input/res")
    (work / "output").mkdir()

    def real(text: str) -> str:
        for inside, outside in places.items():
            text = text.replace(inside, str(outside))
        return text

    for source in (work / "program").rglob("*.py"):
        source.write_text(real(source.read_text()))
    argv = [sys.executable if part.startswith("python") else real(part) for part in scorer.command]
    done = subprocess.run(argv, cwd=work / "program", timeout=600, capture_output=True, check=False)
    if done.returncode != 0:
        return None
    for name in ("scores.json", "scores.txt"):
        if (work / "output" / name).is_file():
            text = (work / "output" / name).read_text()
            found = json.loads(text) if name.endswith(".json") else yaml.safe_load(text)
            return {str(key): value for key, value in found.items()}
    return None


@pytest.mark.skipif(not ROOT, reason="PROCTOR_BUNDLE_EXAMPLES names no folder of bundles")
@pytest.mark.parametrize("bundle", _bundles(), ids=lambda path: path.name)
def test_each_sample_scores_what_the_bundle_program_computes(
    bundle: Path, shared_dir: Path, reference_env: object
) -> None:
    challenge_dir = shared_dir / "challenge"
    try:
        imported = import_bundle(bundle, challenge_dir, str(_environment(shared_dir / "env")))
    except ConfigError as err:
        pytest.skip(f"refused: {err}")
    if any("ingestion_program" in warning for warning in imported.warnings):
        pytest.skip("a code-submission bundle: its ingestion program does not run yet")
    challenge = load_challenge(challenge_dir)
    settings = Settings(work_root=shared_dir / "runs")
    solutions = sorted((challenge_dir / "kit/solutions").glob("*"))
    results = [s for s in solutions if not (s / "metadata").exists() and s.is_dir()]
    if not results:
        pytest.skip("no result-submission sample")
    for number, solution in enumerate(results):
        for phase in challenge.phases:
            report = run_entry(RunRequest(solution, str(challenge_dir), phase=phase.name), settings)
            for task in (task for task in challenge.tasks if task.name in phase.tasks):
                work = shared_dir / f"direct-{number}-{phase.name}-{task.name}"
                _same_as_direct(report, task, solution, work)


def _same_as_direct(report: EvaluationReport, task: Task, solution: Path, work: Path) -> None:
    """The task's scores in ``report`` are the program's own, run directly on ``solution``."""
    scorer = task.scorer
    assert isinstance(scorer, ScoringProgram)
    assert task.hidden_references is not None
    expected = _direct(scorer, task.hidden_references, solution, work)
    if expected is None:  # the sample does not fit this task: the program fails
        assert report.failure is Failure.SCORER, (solution.name, task.name)
        return
    assert report.status is RunStatus.SCORED, (solution.name, task.name)
    for metric in scorer.metrics:
        if metric not in scorer.computed:
            assert report.scores[task.name][metric] == float(expected[metric])
