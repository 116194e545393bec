"""Public example bundles and EvalAI challenges, imported and scored in the sandbox.

Each sample submission scores exactly what the bundle's own program computes when run
directly (outside any sandbox: ``tests/support/bundle_direct.py``). Nothing of those bundles is
part of
this repository: set PROCTOR_BUNDLE_EXAMPLES to a folder holding Codabench/CodaLab bundles
(searched for ``competition.yaml``; e.g. codalab/competition-examples' codabench/ and codalab/
folders) and PROCTOR_EVALAI_EXAMPLES to a folder holding EvalAI challenge folders (searched for
``challenge_config.yaml``, each scored on its ``*submission*`` files); skipped otherwise. The
programs run in the reference environment (numpy, scipy, scikit-learn, pandas...), the direct
runs with this interpreter (the same libraries). ``bench/real_bundles.py`` runs the same
comparison in the bundles' own environments, through the command line, and prints a table.
"""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from bundle_direct import RefusedByDesignError, direct_scores, runs_entry_code
from paths import BUNDLED_ENV

from proctor.errors import ConfigError
from proctor.pipeline.report import EvaluationReport
from proctor.resolve import load_challenge
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.spec.model import Challenge, Task
from proctor.spec.scorer import ScoringProgram
from proctor.types import Failure, RunStatus, Stage, StageStatus

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
ROOT = os.environ.get("PROCTOR_BUNDLE_EXAMPLES", "")
EVALAI_ROOT = os.environ.get("PROCTOR_EVALAI_EXAMPLES", "")
TIMINGS = frozenset({"duration", "time", "elapsed", "runtime"})
"""Columns measuring how long the code ran: they differ between any two runs."""
BUNDLED = BUNDLED_ENV
SAMPLE_SUFFIXES = frozenset({".json", ".csv", ".txt", ".tsv", ".npy", ".zip"})
"""What an EvalAI sample submission at a challenge's root is (not its README or script)."""


def _found(root: str, marker: str) -> list[Path]:
    if not root:
        return []
    return sorted(path.parent for path in Path(root).rglob(marker))


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


def _imported(source: Path, shared_dir: Path) -> Challenge:
    challenge_dir = shared_dir / "challenge"
    try:
        import_challenge(source, challenge_dir, str(_environment(shared_dir / "env")))
    except ConfigError as err:
        pytest.skip(f"refused: {err}")
    return load_challenge(challenge_dir)


def _compare(challenge: Challenge, uploads: list[Path], shared_dir: Path) -> None:
    """Every upload on every phase: Proctor's scores are the program's own, run directly."""
    settings = Settings(work_root=shared_dir / "runs")
    for number, upload in enumerate(uploads):
        for phase in challenge.phases:
            report = run_entry(RunRequest(upload, str(challenge.root), phase=phase.name), settings)
            for task in (task for task in challenge.tasks if task.name in phase.tasks):
                work = shared_dir / f"direct-{number}-{phase.name}-{task.name}"
                _same_as_direct(report, challenge, task, upload, work)


@pytest.mark.skipif(not ROOT, reason="PROCTOR_BUNDLE_EXAMPLES names no folder of bundles")
@pytest.mark.parametrize("bundle", _found(ROOT, "competition.yaml"), ids=lambda path: path.name)
def test_each_sample_scores_what_the_bundle_program_computes(
    bundle: Path, shared_dir: Path, reference_env: object
) -> None:
    challenge = _imported(bundle, shared_dir)
    solutions = sorted((challenge.root / "kit/solutions").glob("*"))
    uploads = [solution for solution in solutions if solution.is_dir()]
    if not uploads:
        pytest.skip("no sample submission")
    _compare(challenge, uploads, shared_dir)


@pytest.mark.skipif(not EVALAI_ROOT, reason="PROCTOR_EVALAI_EXAMPLES names no folder")
@pytest.mark.parametrize(
    "folder", _found(EVALAI_ROOT, "challenge_config.yaml"), ids=lambda path: path.name
)
def test_each_evalai_sample_scores_what_evaluate_returns(
    folder: Path, shared_dir: Path, reference_env: object
) -> None:
    challenge = _imported(folder, shared_dir)
    uploads = []
    samples = [path for path in folder.glob("*submission*") if path.suffix in SAMPLE_SUFFIXES]
    for sample in sorted(samples):
        upload = shared_dir / f"{sample.name}.zip"  # Proctor's upload: a zip holding the file
        with zipfile.ZipFile(upload, "w") as archive:
            archive.write(sample, sample.name)
        uploads.append(upload)
    if not uploads:
        pytest.skip("no *submission* file")
    _compare(challenge, uploads, shared_dir)


def _same_as_direct(
    report: EvaluationReport, challenge: Challenge, task: Task, upload: Path, work: Path
) -> None:
    """The task's scores in ``report`` are the program's own, run directly on ``upload``."""
    scorer = task.scorer
    assert isinstance(scorer, ScoringProgram)
    try:
        expected = direct_scores(challenge, task, upload, work, sys.executable)
    except RefusedByDesignError:  # Proctor refuses such an upload at prep, by design
        assert report.failure is Failure.ENTRY, (upload.name, task.name)
        return
    if expected is None:  # the sample does not fit this task: the program fails
        entry_code = runs_entry_code(challenge, task, upload) or _refused_at_prep(report)
        failure = Failure.ENTRY if entry_code else Failure.SCORER
        assert report.failure is failure, (upload.name, task.name)
        return
    assert report.status is RunStatus.SCORED, (upload.name, task.name)
    again = direct_scores(challenge, task, upload, work.with_name(work.name + "-2"), sys.executable)
    if again != expected:  # the program is not deterministic (an unseeded model or score)
        assert set(report.scores[task.name]) - set(scorer.computed) <= set(expected)
        return
    for metric in scorer.metrics:
        if metric not in scorer.computed and metric.lower() not in TIMINGS:
            assert report.scores[task.name][metric] == float(expected[metric])


def _refused_at_prep(report: EvaluationReport) -> bool:
    """True when prep refused the upload (a file type the challenge does not take)."""
    return any(
        stage.stage is Stage.PREP and stage.status is StageStatus.FAILED for stage in report.stages
    )
