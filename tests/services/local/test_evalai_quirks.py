"""EvalAI scripts' conventions met in public challenges, each on a look-alike written here.

Each script below is scored in the sandbox and compared with the same script called directly
as EvalAI's worker calls it (``tests/support/evalai_challenge.py``); none of a public challenge's
files is used.
"""

from __future__ import annotations

import contextlib
import json
import zipfile
from pathlib import Path

import pytest
from evalai_challenge import SUBMISSION, evaluate_directly, make_evalai_challenge

from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import RunStatus

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

ZIP_SCRIPT = """\
import json
import zipfile


def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):
    with open(test_annotation_file) as handle:
        truth = json.load(handle)["train_split"]
    with zipfile.ZipFile(user_submission_file) as archive:
        guesses = json.loads(archive.read("guesses.json"))
    right = sum(guesses.get(key) == label for key, label in truth.items())
    return {"result": [{"train_split": {"Accuracy": right / len(truth), "Errors": 0}}]}
"""


def _scored(root: Path, main_py: str, upload: Path) -> tuple[dict[str, float], dict[str, float]]:
    """(Proctor's scores of the dev phase's task, the script's own called directly)."""
    source = make_evalai_challenge(root / "source", main_py=main_py)
    challenge = root / "challenge"
    import_challenge(source, challenge, "host")
    settings = Settings(work_root=root / "runs")
    report = run_entry(RunRequest(upload, str(challenge), phase="dev"), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    submitted = next(path for path in upload.iterdir())
    (root / "direct").mkdir()
    with contextlib.chdir(root / "direct"):  # a working folder of its own, as on EvalAI
        direct = evaluate_directly(
            challenge / "evaluation_script", source / "annotations/dev.json", submitted, "dev"
        )
    return report.scores["dev-train-split"], direct["result"][0]["train_split"]


def test_a_zip_submission_reaches_the_script_as_the_zip(shared_dir: Path) -> None:
    upload = shared_dir / "upload"
    upload.mkdir()
    with zipfile.ZipFile(upload / "predictions.zip", "w") as archive:
        archive.writestr("guesses.json", json.dumps(SUBMISSION))
    scores, direct = _scored(shared_dir, ZIP_SCRIPT, upload)
    assert scores == {"Accuracy": direct["Accuracy"], "Errors": 0.0}
    assert scores["Accuracy"] == 0.5


ACCURACY = """\
    with open(test_annotation_file) as handle:
        truth = json.load(handle)["train_split"]
    with open(user_submission_file) as handle:
        guesses = json.load(handle)
    right = sum(guesses.get(key) == label for key, label in truth.items())
    return {"result": [{"train_split": {"Accuracy": right / len(truth), "Errors": 0}}]}
"""
CONVENTIONS = {
    "three arguments, no **kwargs": "import json\n\n\n"
    "def evaluate(test_annotation_file, user_annotation_file, phase_codename):\n"
    "    user_submission_file = user_annotation_file\n" + ACCURACY,
    "reads the worker's metadata keys": "import json\n\n\n"
    "def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):\n"
    "    meta = kwargs['submission_metadata']\n"
    "    print(meta['participant_team_name'], meta['id'], meta['submitted_at'])\n" + ACCURACY,
    "writes in its working folder": "import json, os\n\n\n"
    "def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):\n"
    "    os.makedirs('./tmp', exist_ok=True)\n"
    "    open('./tmp/notes.txt', 'w').close()\n" + ACCURACY,
}


@pytest.mark.parametrize("convention", list(CONVENTIONS))
def test_evaluate_is_called_as_evalais_worker_calls_it(shared_dir: Path, convention: str) -> None:
    upload = shared_dir / "upload"
    upload.mkdir()
    (upload / "guesses.json").write_text(json.dumps(SUBMISSION))
    scores, direct = _scored(shared_dir, CONVENTIONS[convention], upload)
    assert (
        scores
        == {"Accuracy": direct["Accuracy"], "Errors": 0.0}
        == {"Accuracy": 0.5, "Errors": 0.0}
    )
