"""Runs an EvalAI evaluation script inside the sandbox, as EvalAI's worker calls it.

Not imported by Proctor: its text is written into each run (``scoring.evalai``) and run there
with the environment's python3 (standard library only). It reads ``/scoring/evalai.json``
(phase, split, annotation), finds the one submitted file (given as it is: a zip stays a zip),
calls ``evaluate(annotation, submission, phase, submission_metadata=...)`` from a writable
working folder of its own, as EvalAI's worker does (the metadata has the worker's keys, with
neutral values; a script whose ``evaluate`` takes no ``**kwargs`` gets the three arguments
only, as EvalAI's first workers called it) and writes the split's labels as ``scores.json``;
the whole output (``result``, ``submission_result``) is printed for the organizer's log.
The environment's python3 may be older than Proctor's: nothing newer than Python 3.7 here.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
import os
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SETTINGS = Path("/scoring/evalai.json")
ROOT = "/scoring/evalai"
PACKAGE = "evaluation_script"


def fail(message: str) -> None:
    """Stop with ``message`` on stderr (the organizer's log) and exit status 2."""
    print(f"evalai driver: {message}", file=sys.stderr)
    raise SystemExit(2)


def regular_files(root: Path) -> list[Path]:
    """Every regular file below ``root`` (or ``root`` itself), sorted."""
    if root.is_file():
        return [root]
    return sorted(path for path in root.rglob("*") if path.is_file() and not path.is_symlink())


def submission_file(outputs: Path) -> Path:
    """The one submitted file, as EvalAI's worker gives it to ``evaluate`` (a zip stays a zip)."""
    files = regular_files(outputs)
    if len(files) != 1:
        names = ", ".join(str(path.relative_to(outputs)) for path in files[:5]) or "none"
        fail(f"an EvalAI submission is one file (zip that one file to upload it); found: {names}")
    return files[0]


def annotation_file(reference: Path, cases: list[str], name: str) -> Path:
    """The phase's annotation file: in the case's reference folder, or at the top."""
    for candidate in [*(reference / case / name for case in cases), reference / name]:
        if candidate.is_file():
            return candidate
    fail(f"no annotation file {name} in the references")
    raise AssertionError


def split_scores(output: Any, split: str, phase_splits: list[str]) -> dict[str, Any]:
    """The labels of ``split`` in ``output["result"]``, read as EvalAI's worker reads it.

    Each entry of the list reports the split that is its first key (any other key of the entry
    is not read); an entry that is no mapping, holds a NaN or infinity (its database refuses
    them), or (with ``phase_splits``) names a split the phase lacks, fails the whole submission
    on EvalAI, and here.
    """
    if not isinstance(output, dict) or not isinstance(output.get("result"), list):
        fail('evaluate() must return a dict whose "result" is a list of {SPLIT: {LABEL: value}}')
    entries: list[tuple[str, Any]] = []  # (the split an entry reports, its labels)
    for item in output["result"]:
        if not isinstance(item, dict) or not item:
            fail(f"a result entry is not {{SPLIT: {{LABEL: value}}}}: {str(item)[:80]!r}")
        first = next(iter(item))
        name, labels = str(first), item[first]
        bad = not_finite(labels)
        if bad:
            fail(
                f"evaluate() gave {name}.{bad} = NaN or infinity: EvalAI's database refuses "
                "such a result, failing the submission"
            )
        if phase_splits and name not in phase_splits:
            fail(
                f"evaluate() gave a result for split {name!r}, which this phase does not have "
                f"(its splits: {', '.join(phase_splits)}); EvalAI's worker fails such a "
                "submission: return only the phase's splits"
            )
        entries.append((name, labels))
    for name, labels in entries:
        if name == split and isinstance(labels, dict):
            return {
                label: value.item() if hasattr(value, "item") else value
                for label, value in labels.items()
            }
    found = ", ".join(name for name, _ in entries) or "none"
    fail(f"evaluate() gave no result for split {split!r} (it gave: {found})")
    raise AssertionError


def not_finite(labels: Any) -> str:
    """The first label of ``labels`` whose value is a NaN or infinite number ('' if none)."""
    if not isinstance(labels, dict):
        return ""
    for label, value in labels.items():
        number = value.item() if hasattr(value, "item") else value
        if isinstance(number, float) and not math.isfinite(number):
            return str(label)
    return ""


def takes_metadata(evaluate: Any) -> bool:
    """Whether ``evaluate`` accepts ``submission_metadata=`` (a ``**kwargs`` or that name)."""
    try:
        parameters = inspect.signature(evaluate).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(
        parameter.kind is parameter.VAR_KEYWORD or parameter.name == "submission_metadata"
        for parameter in parameters
    )


def submission_metadata(submission: Path) -> dict[str, Any]:
    """The keys EvalAI's worker gives, with neutral values (no team, no identity)."""
    return {
        "id": 0,
        "status": "running",
        "participant_team": 0,
        "participant_team_name": "",
        "created_by": "",
        "challenge_phase": 0,
        "method_name": "",
        "method_description": "",
        "project_url": "",
        "publication_url": "",
        "is_public": False,
        "when_made_public": None,
        "submitted_at": datetime.now(timezone.utc).isoformat(),  # noqa: UP017 (any python3)
        "execution_time": "",
        "input_file": submission.name,
        "submitted_file": submission.name,
        "stdout_file": "",
        "stderr_file": "",
        "submission_result_file": "",
    }


def main() -> None:
    """Evaluate the submission and write ``scores.json``."""
    settings = json.loads(SETTINGS.read_text(encoding="utf-8"))
    cases = Path(os.environ["PROCTOR_CASES_FILE"]).read_text(encoding="utf-8").split()
    submission = submission_file(Path(os.environ["PROCTOR_OUTPUTS"]))
    annotation = annotation_file(
        Path(os.environ["PROCTOR_REFERENCE"]), cases, settings["annotation"]
    )
    sys.path.insert(0, ROOT)
    os.chdir(tempfile.mkdtemp(prefix="evalai-run-"))  # writable, as the worker's folder is
    evaluate = importlib.import_module(PACKAGE).evaluate
    arguments = (str(annotation), str(submission), settings["phase"])
    if takes_metadata(evaluate):
        output = evaluate(*arguments, submission_metadata=submission_metadata(submission))
    else:  # a script written for EvalAI's first workers: three arguments
        output = evaluate(*arguments)
    scores = split_scores(output, settings["split"], settings.get("phase_splits") or [])
    for metric, label in settings["labels"].items():
        if label in scores:
            scores[metric] = scores.pop(label)
    print(
        json.dumps(
            {"result": output.get("result"), "submission_result": output.get("submission_result")},
            default=str,
        )
    )
    scores_dir = Path(os.environ["PROCTOR_SCORES_DIR"])
    (scores_dir / "scores.json").write_text(json.dumps(scores, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
