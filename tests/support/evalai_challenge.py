"""A small EvalAI challenge folder, starter-like, for the EvalAI import and scorer tests.

Two phases (``dev`` on the train split; ``test`` on the train and test splits), one
leaderboard (``Accuracy`` first, ``Errors`` lower is better), an evaluation script computing
each split's accuracy from a JSON submission ``{ID: LABEL}`` against the annotations
``{SPLIT: {ID: LABEL}}``. ``SUBMISSION`` scores non-trivially on every split.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from pathlib import Path
from typing import Any

ANNOTATIONS = {
    "dev": {"train_split": {"a": 1, "b": 0, "c": 1, "d": 1}},
    "test": {
        "train_split": {"a": 1, "b": 0, "c": 1, "d": 1},
        "test_split": {"e": 0, "f": 1, "g": 0, "h": 0, "i": 1},
    },
}
SUBMISSION = {"a": 1, "b": 1, "c": 1, "d": 0, "e": 0, "f": 1, "g": 1, "h": 0, "i": 1}
SECRET = "ANNOTATION-SECRET-4471"
WORKER_METADATA = {
    "status": "running",
    "participant_team": 5,
    "participant_team_name": "Test Team",
    "method_name": "Test",
    "id": 123,
    "submitted_at": "2017-03-20T19:22:03.880652Z",
    "is_public": False,
}
"""Keys of the metadata EvalAI's worker gives ``evaluate`` (a sample, as its docs show)."""

INIT_PY = "from .main import evaluate\n"
MAIN_PY = """\
import json

from .splits import split_names


def accuracy(truth, guesses):
    right = sum(guesses.get(key) == label for key, label in truth.items())
    return right / len(truth), len(truth) - right


def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):
    print("Starting Evaluation.....", kwargs["submission_metadata"]["status"])
    with open(test_annotation_file) as handle:
        annotations = json.load(handle)
    with open(user_submission_file) as handle:
        guesses = json.load(handle)
    result = []
    for split in split_names(phase_codename):
        share, errors = accuracy(annotations[split], guesses)
        result.append({split: {"Accuracy": share, "Errors": errors, "Extra": 7}})
    output = {"result": result, "submission_result": result[0]}
    print("Completed evaluation for", phase_codename)
    return output
"""
SPLITS_PY = """\
def split_names(phase_codename):
    return ["train_split"] if phase_codename == "dev" else ["train_split", "test_split"]
"""

CONFIG = """\
title: Toy Accuracy Challenge
title: Toy Accuracy Challenge (EvalAI)
short_description: Guess the labels
description: templates/description.html
evaluation_script: evaluation_script.zip
remote_evaluation: False
start_date: 2019-01-01 00:00:00
end_date: 2099-05-31 23:59:59
leaderboard:
  - id: 1
    schema:
      {
        "labels": ["Errors", "Accuracy"],
        "default_order_by": "Accuracy",
        "metadata": {"Errors": {"sort_ascending": True, "description": "wrong labels"}}
      }
challenge_phases:
  - id: 1
    name: Dev Phase
    codename: dev
    start_date: 2019-01-19 00:00:00
    end_date: 2099-04-25 23:59:59
    test_annotation_file: annotations/dev.json
    max_submissions_per_day: 5
    max_submissions: 50
    allowed_submission_file_types: ".json, .zip"
  - id: 2
    name: Test Phase
    codename: test
    start_date: 2019-01-19 00:00:00
    end_date: 2099-04-25 23:59:59
    test_annotation_file: annotations/test.json
    max_submissions_per_day: 3
    max_submissions_per_month: 30
dataset_splits:
  - id: 1
    name: Train Split
    codename: train_split
  - id: 2
    name: Test Split
    codename: test_split
challenge_phase_splits:
  - challenge_phase_id: 1
    leaderboard_id: 1
    dataset_split_id: 1
    visibility: 3
    is_leaderboard_order_descending: True
  - challenge_phase_id: 2
    leaderboard_id: 1
    dataset_split_id: 1
    visibility: 3
  - challenge_phase_id: 2
    leaderboard_id: 1
    dataset_split_id: 2
    visibility: 1
"""


def make_evalai_challenge(root: Path, *, main_py: str = MAIN_PY) -> Path:
    """Write the challenge folder (CRLF line endings, a duplicate key) under ``root``."""
    script = root / "evaluation_script"
    script.mkdir(parents=True)
    for name, text in (("__init__.py", INIT_PY), ("main.py", main_py), ("splits.py", SPLITS_PY)):
        (script / name).write_text(text)
    (root / "annotations").mkdir()
    for phase, labels in ANNOTATIONS.items():
        (root / "annotations" / f"{phase}.json").write_text(json.dumps(labels))
    (root / "templates").mkdir()
    (root / "templates/description.html").write_text("<p>Guess the labels.</p>\n")
    (root / "challenge_config.yaml").write_bytes(CONFIG.replace("\n", "\r\n").encode())
    return root


def make_upload(root: Path, guesses: dict[str, int] | None = None) -> Path:
    """The upload of the imported challenge: the one file a participant gives EvalAI."""
    root.mkdir(parents=True)
    (root / "guesses.json").write_text(json.dumps(guesses or SUBMISSION))
    return root


def evaluate_directly(script: Path, annotation: Path, submission: Path, phase: str) -> Any:
    """Call the evaluation script's ``evaluate`` in this process, as a package."""
    name = f"evalai_direct_{phase}"
    for loaded in [key for key in sys.modules if key == name or key.startswith(f"{name}.")]:
        del sys.modules[loaded]  # another test's script of the same name
    spec = importlib.util.spec_from_file_location(
        name, script / "__init__.py", submodule_search_locations=[str(script)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    arguments = (str(annotation), str(submission), phase)
    parameters = inspect.signature(module.evaluate).parameters.values()
    if not any(parameter.kind is parameter.VAR_KEYWORD for parameter in parameters):
        return module.evaluate(*arguments)  # EvalAI's first workers: three arguments
    return module.evaluate(*arguments, submission_metadata=WORKER_METADATA)
