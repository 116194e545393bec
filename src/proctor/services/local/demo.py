"""Use case: the demo.

Every bundled challenge's baseline and a trivial entry (the challenge's own ``trivial/`` folder,
else one written here: constant predictions for ``records``, a constant ``model.py`` for
``python_model``, empty masks for ``command``, empty annotations for ``predictions``) are
evaluated end to end (by the face, through ``run_entry``: in the sandbox where code runs) and
ranked on the challenge's leaderboard.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from proctor.challenges import bundled_names, bundled_root, folder_name
from proctor.leaderboard import Standing, build_leaderboard
from proctor.pipeline.report import EvaluationReport
from proctor.protocols.base import HIDDEN, PUBLIC, FilesDriver
from proctor.protocols.command import CommandProtocol
from proctor.protocols.python_model import PythonModelProtocol
from proctor.protocols.records import list_records
from proctor.protocols.registry import driver_for
from proctor.services.local.catalog import BASELINE_FOLDER, resolve_challenge
from proctor.spec import Challenge
from proctor.types import RunStatus

TRIVIAL_FOLDER = "trivial"
"""A bundled challenge's trivial entry (the leaderboard's floor), beside its baseline."""
CONSTANT = 0.5
CONSTANT_NEXT = f"""#!/bin/sh
# Predicts {CONSTANT:.3f} for every sample: the chance-level reference on the leaderboard.
set -e
samples=$(head -n 1 "$PROCTOR_DATA/$1.hea" | cut -d ' ' -f 4)
yes {CONSTANT:.3f} | head -n "$samples" > "$1.vec"
"""


CONSTANT_MODEL = f"""\"\"\"Predicts {CONSTANT} for every test row: chance level (AUC 0.5).\"\"\"


class Model:
    def __init__(self, info):
        self.info = info

    def train(self, X, y):
        pass

    def save(self, directory):
        pass

    def load(self, directory):
        pass

    def predict(self, X):
        return [{CONSTANT}] * len(X)
"""


def write_constant_model(dest: Path, module: str = "model.py") -> Path:
    """A python_model entry whose ``Model`` predicts a constant (every AUC is 0.5)."""
    dest.mkdir(parents=True)
    (dest / module).write_text(CONSTANT_MODEL, encoding="utf-8")
    return dest


def _header_samples(header: Path) -> int:
    fields = header.read_text(encoding="utf-8").splitlines()[0].split()
    return int(fields[3])


def write_constant_entry(challenge: Challenge, dest: Path) -> Path:
    """A records entry predicting a constant, with its quiz answers (WFDB inputs only)."""
    dest.mkdir(parents=True)
    for name, text in (("setup.sh", "#!/bin/sh\nexit 0\n"), ("next.sh", CONSTANT_NEXT)):
        (dest / name).write_text(text, encoding="utf-8")
        (dest / name).chmod(0o755)
    for name in ("AUTHORS.txt", "LICENSE.txt"):
        (dest / name).write_text("Proctor demo\n", encoding="utf-8")
    answers = dest / "answers"
    answers.mkdir()
    for task in challenge.tasks:
        for record in list_records(task.public_inputs):
            samples = _header_samples(task.public_inputs / f"{record}.hea")
            (answers / f"{record}.vec").write_text(f"{CONSTANT:.3f}\n" * samples)
    return dest


def write_empty_predictions(challenge: Challenge, dest: Path) -> Path:
    """A predictions entry that finds nothing: each case's sentences, empty annotation files.

    The chance-level reference of the eHealth-KD board (every score 0).
    """
    protocol = challenge.protocol
    driver = driver_for(protocol.kind)
    for task in challenge.tasks:
        for split, inputs in ((PUBLIC, task.public_inputs), (HIDDEN, task.hidden_inputs)):
            if inputs is None or not issubclass(driver, FilesDriver):
                continue
            for case in driver.list_cases(protocol, inputs):
                folder = dest / driver.split_folder(protocol, split) / case
                folder.mkdir(parents=True)
                for sentences in inputs.glob("input_*.txt"):
                    name = sentences.name.removeprefix("input_")
                    shutil.copyfile(sentences, folder / f"output_{name}")
                    (folder / f"output_a_{name}").touch()
                    (folder / f"output_b_{name}").touch()
    return dest


EMPTY_MASKS = """#!/usr/bin/env python3
# Writes an empty mask (all 0) for every organ asked: the floor of the organ board.
import os, sys
import nibabel as nib
import numpy as np

args = sys.argv[1:]
source, outdir = args[args.index("-i") + 1], args[args.index("-o") + 1]
ids = args[args.index("-r") + 1 :]
image = nib.load(source)
case = os.path.basename(source)[: -len(".nii.gz")]
for radlex in ids:
    mask = nib.Nifti1Image(np.zeros(image.shape, np.uint8), image.affine)
    nib.save(mask, os.path.join(outdir, f"{case}_{radlex}_empty_1.nii.gz"))
"""


def write_empty_mask_entry(challenge: Challenge, dest: Path) -> Path:
    """A command entry writing an empty mask for every organ it is asked for."""
    protocol = challenge.protocol
    program = protocol.program if isinstance(protocol, CommandProtocol) else "execute_standard"
    dest.mkdir(parents=True)
    (dest / program).write_text(EMPTY_MASKS, encoding="utf-8")
    (dest / program).chmod(0o755)
    return dest


def demo_entries(challenge: Challenge, scratch: Path) -> list[tuple[str, Path]]:
    """(label, entry) pairs the demo evaluates for ``challenge``."""
    entries = []
    baseline = challenge.root / BASELINE_FOLDER
    if baseline.is_dir():
        entries.append(("baseline", baseline))
    protocol = challenge.protocol
    trivial = challenge.root / TRIVIAL_FOLDER
    if trivial.is_dir():
        entries.append(("trivial", trivial))
    elif protocol.kind == "records":
        entries.append(("constant-0.5", write_constant_entry(challenge, scratch / "constant")))
    elif protocol.kind == "predictions":
        entries.append(("empty", write_empty_predictions(challenge, scratch / "empty")))
    elif isinstance(protocol, PythonModelProtocol):
        constant = write_constant_model(scratch / "constant", protocol.module)
        entries.append(("constant-0.5", constant))
    elif protocol.kind == "command":
        entries.append(("empty-masks", write_empty_mask_entry(challenge, scratch / "empty")))
    return entries


def demo_leaderboard(
    challenge: Challenge, reports: Sequence[tuple[str, EvaluationReport]]
) -> list[Standing]:
    """Rank the scored demo entries by the challenge's leaderboard metric (none without one)."""
    board = challenge.leaderboard
    if board is None:
        return []
    tasks = list(challenge.phase(None).tasks)  # the demo evaluates the final (last) phase
    results = {
        label: {task: report.scores.get(task, {}).get(board.metric, float("nan")) for task in tasks}
        for label, report in reports
        if report.status is RunStatus.SCORED
    }
    direction = challenge.leaderboard_direction()
    return build_leaderboard(results, tasks=tasks, higher_is_better=direction.higher_is_better)


def demo_challenges() -> list[Challenge]:
    """Every bundled challenge, loaded and checked."""
    return [resolve_challenge(str(bundled_root() / folder_name(name))) for name in bundled_names()]
