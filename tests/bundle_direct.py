"""A bundle's own programs run directly, outside any sandbox: the scores Proctor must equal.

Shared by tests/test_bundle_examples.py and bench/real_bundles.py. Nothing here runs in
Proctor's sandbox or goes through Proctor's scorers: only the imported challenge's task spec
(which program, which command, which references) is read, then the organizer's program runs
as its platform runs it:

- a Codabench/CodaLab scoring program (and its ingestion program, for code submissions) in a
  temporary copy of the compute worker's layout, every ``/app/...`` path (in its command and
  in its ``.py`` files) made a real one;
- an EvalAI evaluation script imported as a package and called as EvalAI's worker calls it,
  ``evaluate(annotation, submission, phase_codename, submission_metadata={...})``, the
  submitted file given as it is (a zip stays a zip).

``python`` is the interpreter to run them with: one whose libraries are those of the
challenge's environment (the bench builds a virtual environment from its lock). A program's
own ``pip install`` finds no package (no index, no links), as in the sandbox without network,
so it cannot change that environment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import yaml

from proctor.spec.evalai_scorer import EvalaiScorer
from proctor.spec.model import Task
from proctor.spec.scorer import ScoringProgram

TIMEOUT_S = 900
NO_INSTALLS = {
    "PIP_NO_INDEX": "1",
    "PIP_FIND_LINKS": "",
    "PIP_EXTRA_INDEX_URL": "",
    "PIP_CONFIG_FILE": os.devnull,
}
"""A program's own ``pip install`` finds nothing (as in the sandbox), not a changed library."""


def _environ(python: str) -> dict[str, str]:
    """The direct run's variables: no installs, ``python`` first on PATH (for subprocesses)."""
    path = f"{Path(python).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, **NO_INSTALLS, "PATH": path}


EVALAI_CALL = """\
import inspect, json, sys
sys.path.insert(0, sys.argv[1])
from evaluation_script import evaluate
metadata = {"status": "running", "method_name": "", "participant_team_name": "direct",
            "participant_team": 1, "submitted_at": "2026-01-01T00:00:00Z", "id": 1,
            "is_public": False}
kinds = [parameter.kind for parameter in inspect.signature(evaluate).parameters.values()]
if inspect.Parameter.VAR_KEYWORD in kinds:
    output = evaluate(sys.argv[2], sys.argv[3], sys.argv[4], submission_metadata=metadata)
else:  # EvalAI's first workers: three arguments
    output = evaluate(sys.argv[2], sys.argv[3], sys.argv[4])
def plain(value):
    return value.item() if hasattr(value, "item") else str(value)
with open(sys.argv[5], "w") as handle:
    json.dump(output, handle, default=plain)
"""


def unpacked(upload: Path, work: Path) -> Path:
    """``upload`` as a folder: itself, or the zip unpacked as Codabench's worker unpacks it."""
    if upload.is_dir():
        return upload
    folder = work / "upload"
    with zipfile.ZipFile(upload) as archive:
        archive.extractall(folder)
    return folder


def run_real(folder: Path, command: tuple[str, ...], places: dict[str, Path], python: str) -> bool:
    """Run a program copied to ``folder``, its ``/app/...`` paths (in its files too) made real."""

    def real(text: str) -> str:
        for inside, outside in places.items():
            text = text.replace(inside, str(outside))
        return text

    for source in folder.rglob("*.py"):
        try:
            source.write_text(real(source.read_text(encoding="utf-8")), encoding="utf-8")
        except UnicodeDecodeError:
            continue
    argv = [python if Path(part).name.startswith("python") else real(part) for part in command]
    try:
        done = subprocess.run(
            argv, cwd=folder, timeout=TIMEOUT_S, capture_output=True, check=False,
            env=_environ(python),
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return False
    (folder.parent / f"{folder.name}.log").write_bytes(done.stdout + done.stderr)
    return done.returncode == 0


def _ingest(scorer: ScoringProgram, upload: Path, work: Path, python: str) -> Path:
    """The ingestion program run directly on ``upload``: the folder it wrote."""
    ingestion = scorer.ingestion
    assert ingestion is not None
    output = work / "ingestion-output"
    if any((upload / name).exists() for name in ("metadata", "metadata.yaml")):
        output.mkdir(parents=True)
    else:  # a result upload goes to the output, as the compute worker puts it there
        shutil.copytree(upload, output)
    (work / "shared").mkdir(parents=True, exist_ok=True)
    shutil.copytree(ingestion.program, work / "ingestion")
    places = {
        "/app/input_data": ingestion.input_data or work,
        "/app/ingested_program": upload,
        "/app/output": output,
        "/app/shared": work / "shared",
        "/app/program": work / "ingestion",
    }
    run_real(work / "ingestion", ingestion.command, places, python)  # a failure: score anyway
    return output


def codabench_direct(
    scorer: ScoringProgram, references: Path, upload: Path, work: Path, python: str
) -> dict[str, Any] | None:
    """The scores a Codabench/CodaLab program writes run directly; None when it writes none."""
    upload = unpacked(upload, work)
    if scorer.ingestion is not None:
        upload = _ingest(scorer, upload, work, python)
    places = {
        "/app/input/ref": work / "input/ref",
        "/app/input/res": work / "input/res",
        "/app/input": work / "input",
        "/app/output": work / "output",
        "/app/shared": work / "shared",
        "/app/program": work / "program",
    }
    shutil.copytree(scorer.program, work / "program")
    shutil.copytree(references, work / "input/ref")
    shutil.copytree(upload, work / "input/res")
    (work / "output").mkdir()
    (work / "shared").mkdir(exist_ok=True)
    if not run_real(work / "program", scorer.command, places, python):
        return None
    for name in ("scores.json", "scores.txt"):
        found = work / "output" / name
        if found.is_file():
            text = found.read_text(encoding="utf-8")
            # scores.txt as the compute worker reads it (PyYAML's full Loader)
            data = json.loads(text) if name.endswith(".json") else yaml.load(text, yaml.Loader)
            return {str(key): value for key, value in data.items()}
    return None


def submitted_file(upload: Path, work: Path) -> Path:
    """The file a participant gives EvalAI: ``upload`` itself, or the one file of its folder."""
    if upload.is_file() and not zipfile.is_zipfile(upload):
        return upload
    folder = unpacked(upload, work) if upload.suffix == ".zip" else upload
    files = [path for path in folder.rglob("*") if path.is_file()]
    if len(files) != 1:
        raise ValueError(f"{upload}: not one file ({len(files)})")
    return files[0]


def evalai_direct(
    scorer: EvalaiScorer, references: Path, upload: Path, work: Path, python: str
) -> dict[str, Any] | None:
    """The split's labels ``evaluate()`` returns, called directly; None when it raises."""
    package = work / "script"
    shutil.copytree(scorer.program, package / "evaluation_script")
    annotation = next(references.rglob(scorer.annotation))
    output = work / "output.json"
    argv = [
        python,
        "-c",
        EVALAI_CALL,
        str(package),
        str(annotation),
        str(submitted_file(upload, work)),
        scorer.phase,
        str(output),
    ]
    try:
        done = subprocess.run(
            argv, cwd=work, timeout=TIMEOUT_S, capture_output=True, check=False,
            env=_environ(python),
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    (work / "evaluate.log").write_bytes(done.stdout + done.stderr)
    if done.returncode != 0 or not output.is_file():
        return None
    returned = json.loads(output.read_text())
    result = returned.get("result") or [] if isinstance(returned, dict) else []
    for item in result:
        if isinstance(item, dict) and isinstance(item.get(scorer.split), dict):
            labels = item[scorer.split]
            return {
                metric: labels.get(scorer.labels.get(metric, metric)) for metric in scorer.metrics
            }
    return None


def direct_scores(task: Task, upload: Path, work: Path, python: str) -> dict[str, Any] | None:
    """The task's scores from its own program run directly on ``upload`` (None: it failed)."""
    scorer = task.scorer
    if not isinstance(scorer, ScoringProgram) or task.hidden_references is None:
        raise TypeError(f"task {task.name}: not a bundle's program")
    work.mkdir(parents=True, exist_ok=True)
    if isinstance(scorer, EvalaiScorer):
        return evalai_direct(scorer, task.hidden_references, upload, work, python)
    return codabench_direct(scorer, task.hidden_references, upload, work, python)
