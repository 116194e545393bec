"""A bundle's own programs run directly, outside any sandbox: the scores Proctor must equal.

Shared by tests/services/local/test_bundle_examples.py and bench/real_bundles.py. Nothing here
runs in
Proctor's sandbox or goes through Proctor's scorers: only the imported challenge's task spec
(which program, which command, which references) is read, then the organizer's program runs
as its platform runs it:

- a Codabench/CodaLab bundle's prediction step, then its scoring program, in a temporary copy
  of the compute worker's layout, every ``/app/...`` path (in its command and in its ``.py``
  files) made a real one. The prediction step follows the imported protocol: under
  ``results`` the upload is ``/app/input/res``; under ``ingestion`` the task's ingestion
  program (``IngestionProtocol.program_of``) runs the upload on the task's hidden inputs, or,
  for a task taking ``submission_programs``, an upload whose ``metadata`` names a ``command``
  runs as that program (``$input`` the input data, as CodaLab gave it), its ``/app/output``
  scored; a code upload without a program to run it leaves the output empty. A scorer's
  ``concurrent_ingestion`` is started beside the scoring program, the two sharing one
  ``/app/shared``, and stopped 5 s after scoring ends (as Proctor does). An upload Codabench
  would run where Proctor refuses it by design (a program under ``results``, a command beside
  an ingestion program) raises :class:`RefusedByDesignError`. A scores file holding a value
  that is not a finite number (``NaN``) gives no scores, as on Codabench, whose worker posts the
  whole file with ``requests``, which refuses it (``InvalidJSONError``): nothing is stored;
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
import math
import os
import shlex
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import yaml

from proctor.protocols.codabench_settings import IngestionProgram, IngestionProtocol
from proctor.scoring.evalai import EvalaiScorer
from proctor.spec.model import Challenge, Task
from proctor.spec.protocols import ProtocolSettings
from proctor.spec.scorer import ConcurrentIngestion, ScoringProgram

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
    """``upload`` as a folder of ``work``: a copy, or the zip unpacked as the worker unpacks it."""
    folder = work / "upload"
    if upload.is_dir():
        shutil.copytree(upload, folder)
    else:
        with zipfile.ZipFile(upload) as archive:
            archive.extractall(folder)
    return folder


def _argv(
    folder: Path, command: tuple[str, ...], places: dict[str, Path], python: str
) -> list[str]:
    """The argv of a program copied to ``folder``, its ``/app/...`` paths (in its files too)
    made real (the longest first: ``/app/input_data`` before ``/app/input``)."""
    ordered = sorted(places.items(), key=lambda item: -len(item[0]))

    def real(text: str) -> str:
        for inside, outside in ordered:
            text = text.replace(inside, str(outside))
        return text

    for source in folder.rglob("*.py"):
        try:
            source.write_text(real(source.read_text(encoding="utf-8")), encoding="utf-8")
        except UnicodeDecodeError:
            continue
    return [python if Path(part).name.startswith("python") else real(part) for part in command]


def run_real(folder: Path, command: tuple[str, ...], places: dict[str, Path], python: str) -> bool:
    """Run a program copied to ``folder``, its ``/app/...`` paths (in its files too) made real."""
    argv = _argv(folder, command, places, python)
    try:
        done = subprocess.run(
            argv, cwd=folder, timeout=TIMEOUT_S, capture_output=True, check=False,
            env=_environ(python),
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return False
    (folder.parent / f"{folder.name}.log").write_bytes(done.stdout + done.stderr)
    return done.returncode == 0


class RefusedByDesignError(Exception):
    """Codabench would run this upload; Proctor refuses it by design (docs/import-bundles.md):
    a program under ``results``, or a command beside an ingestion program."""


def metadata_command(folder: Path) -> str | None:
    """The ``command`` an upload's ``metadata`` (or ``metadata.yaml``) names (the worker's read)."""
    for name in ("metadata.yaml", "metadata"):
        path = folder / name
        if path.is_file():
            try:
                found = yaml.safe_load(path.read_text(encoding="utf-8", errors="replace"))
            except yaml.YAMLError:
                return None
            command = found.get("command") if isinstance(found, dict) else None
            return str(command) if command else None
    return None


def is_code(folder: Path) -> bool:
    """An upload holding a ``metadata`` file is code: the worker does not copy it to the output."""
    return any((folder / name).exists() for name in ("metadata", "metadata.yaml"))


def _ingest(program: IngestionProgram, inputs: Path, upload: Path, work: Path, python: str) -> Path:
    """The ingestion program run directly on ``upload`` (in the exam: the hidden inputs)."""
    output = work / "ingestion-output"
    if is_code(upload):
        output.mkdir(parents=True)
    else:  # a result upload goes to the output, as the compute worker puts it there
        shutil.copytree(upload, output)
    (work / "shared").mkdir(parents=True, exist_ok=True)
    shutil.copytree(program.program, work / "ingestion")
    places = {
        "/app/input_data": inputs,
        "/app/ingested_program": upload,
        "/app/output": output,
        "/app/shared": work / "shared",
        "/app/program": work / "ingestion",
    }
    run_real(work / "ingestion", program.command, places, python)  # a failure: score anyway
    return output


SUBMISSION_VARIABLES = {
    "$submission_program": "/app/ingested_program",
    "$predictions": "/app/output",
    "$program": "/app/program",
    "$shared": "/app/shared",
    "$output": "/app/output",
    "$input": "/app/input_data",
    "$tmp": "/app/output",
}
"""A submission program's variables as CodaLab's worker gave them (``$input``: the input data)."""


def _run_own(command: str, inputs: Path, upload: Path, work: Path, python: str) -> Path:
    """The upload's own ``command`` run directly, as the prediction step runs it: its output."""
    for name, place in SUBMISSION_VARIABLES.items():
        command = command.replace(name, place)
    output = work / "program-output"
    output.mkdir(parents=True)
    (work / "shared").mkdir(parents=True, exist_ok=True)
    shutil.copytree(upload, work / "submission")
    places = {
        "/app/input_data": inputs,
        "/app/output": output,
        "/app/shared": work / "shared",
        "/app/program": work / "submission",
    }
    run_real(work / "submission", tuple(shlex.split(command)), places, python)  # score anyway
    return output


def predictions(
    protocol: ProtocolSettings, task: Task, upload: Path, work: Path, python: str
) -> Path:
    """What the scoring program finds in ``/app/input/res`` after Codabench's prediction step.

    ``RefusedByDesignError``: an upload Codabench would run as a program, which Proctor refuses.
    """
    folder = unpacked(upload, work)
    command = metadata_command(folder)
    if not isinstance(protocol, IngestionProtocol):
        if command is not None:
            raise RefusedByDesignError("a program uploaded to a challenge taking results")
        return folder  # results: the upload as a whole
    inputs = task.hidden_inputs or work / "no-inputs"
    program = protocol.program_of(task.name)
    if program is not None:
        if command is not None:
            raise RefusedByDesignError("a command beside the task's ingestion program")
        return _ingest(program, inputs, folder, work, python)
    if command is not None:
        if protocol.submission_program_of(task.name) is None:
            raise RefusedByDesignError("a program uploaded to a task taking no submission program")
        return _run_own(command, inputs, folder, work, python)
    if is_code(folder):  # code without a program to run it: nothing reaches the output
        (work / "empty-output").mkdir(parents=True)
        return work / "empty-output"
    return folder


def _beside(
    ingestion: ConcurrentIngestion, res: Path, work: Path, python: str
) -> subprocess.Popen[bytes]:
    """The concurrent ingestion started directly, sharing ``work/shared`` with scoring."""
    folder = work / "ingestion"
    shutil.copytree(ingestion.program, folder)
    (work / "ingestion-output").mkdir()
    places = {
        "/app/input_data": ingestion.input_data or work / "no-inputs",
        "/app/input/res": res,
        "/app/ingested_program": res,
        "/app/ingestion_program": work / "not-mounted",  # the worker's $program there
        "/app/output": work / "ingestion-output",
        "/app/shared": work / "shared",
        "/app/program": folder,
    }
    argv = _argv(folder, ingestion.command, places, python)
    with (work / "ingestion.log").open("wb") as log:  # the child keeps its own descriptor
        return subprocess.Popen(argv, cwd=folder, stdout=log, stderr=log, env=_environ(python))


def codabench_direct(
    protocol: ProtocolSettings, task: Task, upload: Path, work: Path, python: str
) -> dict[str, Any] | None:
    """The scores a Codabench/CodaLab program writes run directly; None when it writes none."""
    scorer = task.scorer
    assert isinstance(scorer, ScoringProgram) and task.hidden_references is not None
    res = predictions(protocol, task, upload, work, python)
    places = {
        "/app/input/ref": work / "input/ref",
        "/app/input/res": work / "input/res",
        "/app/input": work / "input",
        "/app/output": work / "output",
        "/app/shared": work / "shared",
        "/app/program": work / "program",
    }
    shutil.copytree(scorer.program, work / "program")
    shutil.copytree(task.hidden_references, work / "input/ref")
    shutil.copytree(res, work / "input/res")
    (work / "output").mkdir()
    (work / "shared").mkdir(exist_ok=True)
    beside = None
    if scorer.concurrent_ingestion is not None:
        places["/app/ingestion_program"] = work / "not-mounted"
        beside = _beside(scorer.concurrent_ingestion, work / "input/res", work, python)
    try:
        if not run_real(work / "program", scorer.command, places, python):
            return None
    finally:
        if beside is not None:  # the ingestion may finish for a few seconds, then stops
            try:
                beside.wait(timeout=5)
            except subprocess.TimeoutExpired:
                beside.kill()
                beside.wait()
    for name in ("scores.json", "scores.txt"):
        found = work / "output" / name
        if found.is_file():
            text = found.read_text(encoding="utf-8")
            # scores.txt as the compute worker reads it (PyYAML's full Loader)
            data = json.loads(text) if name.endswith(".json") else yaml.load(text, yaml.Loader)
            found = {str(key): value for key, value in data.items()}
            if any(
                isinstance(value, float) and not math.isfinite(value) for value in found.values()
            ):
                return None  # the worker posts them with requests, which refuses NaN: no scores
            for metric, key in scorer.score_keys.items():  # the column key, as the metric
                if key in found:
                    found[metric] = found.pop(key)
            return found
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
    labels = worker_split(json.loads(output.read_text()), scorer)
    if labels is None:
        return None
    return {metric: labels.get(scorer.labels.get(metric, metric)) for metric in scorer.metrics}


def worker_split(returned: Any, scorer: EvalaiScorer) -> dict[str, Any] | None:
    """The split's labels as EvalAI's worker reads ``result``: each entry's first key is its
    split; an entry that is no mapping, holds a NaN or infinity, or names a split the phase
    lacks, fails the submission (None)."""
    result = returned.get("result") if isinstance(returned, dict) else None
    if not isinstance(result, list):
        return None
    if not all(isinstance(item, dict) and item for item in result):
        return None
    firsts = [(str(next(iter(item))), item[next(iter(item))]) for item in result]
    numbers = [
        value for _, labels in firsts if isinstance(labels, dict) for value in labels.values()
    ]
    if any(isinstance(value, float) and not math.isfinite(value) for value in numbers):
        return None  # its database refuses NaN and infinity: the submission fails
    if scorer.phase_splits and any(name not in scorer.phase_splits for name, _ in firsts):
        return None
    found = (labels for name, labels in firsts if name == scorer.split)
    return next((dict(labels) for labels in found if isinstance(labels, dict)), None)


def direct_scores(
    challenge: Challenge, task: Task, upload: Path, work: Path, python: str
) -> dict[str, Any] | None:
    """The task's scores from its own programs run directly on ``upload`` (None: it failed).

    ``RefusedByDesignError``: an upload Codabench would run as a program, which Proctor refuses.
    """
    scorer = task.scorer
    if not isinstance(scorer, ScoringProgram) or task.hidden_references is None:
        raise TypeError(f"task {task.name}: not a bundle's program")
    work.mkdir(parents=True, exist_ok=True)
    if isinstance(scorer, EvalaiScorer):
        return evalai_direct(scorer, task.hidden_references, upload, work, python)
    return codabench_direct(challenge.protocol, task, upload, work, python)


def runs_entry_code(challenge: Challenge, task: Task, upload: Path) -> bool:
    """True when Proctor runs participant code for ``task`` on ``upload``: its failure to score
    is then the entry's (``failure: entry``), else the scoring program's (``scorer``)."""
    scorer = task.scorer
    if isinstance(scorer, ScoringProgram) and scorer.concurrent_ingestion is not None:
        return True
    protocol = challenge.protocol
    if not isinstance(protocol, IngestionProtocol):
        return False
    if protocol.program_of(task.name) is not None:
        return True
    if upload.is_dir():
        return metadata_command(upload) is not None
    with tempfile.TemporaryDirectory() as scratch:
        return metadata_command(unpacked(upload, Path(scratch))) is not None
