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
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.spec.ingestion import IngestionProgram, IngestionProtocol
from proctor.spec.loader import load_challenge
from proctor.spec.model import Challenge, Task
from proctor.spec.scorer import ScoringProgram
from proctor.types import Failure, RunStatus

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
ROOT = os.environ.get("PROCTOR_BUNDLE_EXAMPLES", "")
TIMINGS = frozenset({"duration", "time", "elapsed", "runtime"})
"""Columns measuring how long the code ran: they differ between any two runs."""
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


def _run_real(folder: Path, command: tuple[str, ...], places: dict[str, Path]) -> bool:
    """Run a program copied to ``folder``, its ``/app/...`` paths (in its files too) made real."""

    def real(text: str) -> str:
        for inside, outside in places.items():
            text = text.replace(inside, str(outside))
        return text

    for source in folder.rglob("*.py"):
        source.write_text(real(source.read_text()))
    argv = [sys.executable if part.startswith("python") else real(part) for part in command]
    done = subprocess.run(argv, cwd=folder, timeout=600, capture_output=True, check=False)
    return done.returncode == 0


def _ingest_directly(
    ingestion: IngestionProgram, input_data: Path, upload: Path, work: Path
) -> Path:
    """The ingestion program run directly on ``upload``: the folder it wrote."""
    output = work / "ingestion-output"
    if any((upload / name).exists() for name in ("metadata", "metadata.yaml")):
        output.mkdir(parents=True)
    else:
        shutil.copytree(upload, output)
    (work / "shared").mkdir(parents=True)
    shutil.copytree(ingestion.program, work / "ingestion")
    places = {
        "/app/input_data": input_data,
        "/app/ingested_program": upload,
        "/app/output": output,
        "/app/shared": work / "shared",
        "/app/program": work / "ingestion",
    }
    _run_real(work / "ingestion", ingestion.command, places)  # a failure scores what it wrote
    return output


def _direct(
    task: Task, ingestion: IngestionProgram | None, upload: Path, work: Path
) -> dict[str, float] | None:
    """The programs run directly, every ``/app/...`` path (in their files too) made a real one.

    None when the scoring program fails or writes no scores.
    """
    scorer, references = task.scorer, task.hidden_references
    assert isinstance(scorer, ScoringProgram) and references is not None
    if ingestion is not None and task.hidden_inputs is not None:
        upload = _ingest_directly(ingestion, task.hidden_inputs, upload, work)
    places = {
        "/app/input/ref": work / "input/ref",
        "/app/input/res": work / "input/res",
        "/app/input": work / "input",
        "/app/output": work / "output",
        "/app/shared": work / "scoring-shared",
        "/app/program": work / "program",
    }
    (work / "scoring-shared").mkdir(parents=True)
    shutil.copytree(scorer.program, work / "program")
    shutil.copytree(references, work / "input/ref")
    shutil.copytree(upload, work / "input/res")
    (work / "output").mkdir()
    if not _run_real(work / "program", scorer.command, places):
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
        imported = import_challenge(bundle, challenge_dir, str(_environment(shared_dir / "env")))
    except ConfigError as err:
        pytest.skip(f"refused: {err}")
    assert imported.tasks
    challenge = load_challenge(challenge_dir)
    settings = Settings(work_root=shared_dir / "runs")
    solutions = sorted((challenge_dir / "kit/solutions").glob("*"))
    results = [solution for solution in solutions if solution.is_dir()]
    if not results:
        pytest.skip("no sample submission")
    for number, solution in enumerate(results):
        for phase in challenge.phases:
            report = run_entry(RunRequest(solution, str(challenge_dir), phase=phase.name), settings)
            for task in (task for task in challenge.tasks if task.name in phase.tasks):
                work = shared_dir / f"direct-{number}-{phase.name}-{task.name}"
                _same_as_direct(report, challenge, task, solution, work)


def _same_as_direct(
    report: EvaluationReport, challenge: Challenge, task: Task, solution: Path, work: Path
) -> None:
    """The task's scores in ``report`` are the programs' own, run directly on ``solution``."""
    scorer = task.scorer
    assert isinstance(scorer, ScoringProgram)
    if scorer.concurrent_ingestion is not None:
        return  # two programs at once: tests/test_ingestion_protocol.py runs such a pair
    protocol = challenge.protocol
    ingestion = protocol.program_of(task.name) if isinstance(protocol, IngestionProtocol) else None
    expected = _direct(task, ingestion, solution, work)
    if expected is None:  # the sample does not fit this task: the program fails
        failure = Failure.ENTRY if ingestion is not None else Failure.SCORER
        assert report.failure is failure, (solution.name, task.name)
        return
    assert report.status is RunStatus.SCORED, (solution.name, task.name)
    if ingestion is not None:
        again = _direct(task, ingestion, solution, work.with_name(work.name + "-2"))
        if again != expected:  # the participant's code is not deterministic (an unseeded model)
            return
    for metric in scorer.metrics:
        if metric not in scorer.computed and metric not in TIMINGS:
            assert report.scores[task.name][metric] == float(expected[metric])
