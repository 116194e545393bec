"""The files ``proctor challenge new`` writes: a small working challenge for each protocol.

Every template is a toy regression (or, for ``command``, a toy segmentation) small enough to
run in seconds, scored by a scoring program of its own (``scoring/score.py``, numpy), with a
``baseline/`` entry that passes every stage and a ``KIT.md`` for participants. The organizer
replaces the data, the program and the baseline with their own; the layout stays.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from proctor.services.local.template_physionet import physionet_model_files

PUBLIC = {"p01": [1.0, 2.0, 3.5], "p02": [4.0, 0.5], "p03": [2.5, 2.5, 2.5, 1.0]}
HIDDEN = {"h01": [3.0, 1.0], "h02": [5.5, 2.0, 1.0], "h03": [0.5, 0.25], "h04": [7.0]}
STAND_IN = {"s01": [2.0, 0.5, 1.5], "s02": [6.0, 1.5]}
"""The public stand-in for the hidden cases: the starting kit's replica scores on it."""
OFFSETS = {"h01": 0.4, "h02": -1.5, "h03": 0.2, "h04": 2.0}
"""What the hidden truth adds to the sum of a case's numbers (the baseline cannot know it)."""

Files = dict[str, str | bytes]

NUMBERS_SCORE = '''\
"""Score each case's numbers against the reference's: mean absolute error, share within 1.

Reads $PROCTOR_CASES_FILE (the cases), $PROCTOR_OUTPUTS/<output of the case> (named by
$PROCTOR_OUTPUT_TEMPLATE) and $PROCTOR_REFERENCE/<case>.txt; writes $PROCTOR_SCORES_DIR/scores.json.
A case without a usable output is scored as if it answered 0.
"""
import json
import os
from pathlib import Path

import numpy as np


def numbers(path):
    """The numbers of a file, one per line (a first line that is not a number is a header)."""
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    if lines:
        try:
            float(lines[0])
        except ValueError:
            lines = lines[1:]
    return np.array([float(line) for line in lines])


reference = Path(os.environ["PROCTOR_REFERENCE"])
outputs = Path(os.environ["PROCTOR_OUTPUTS"])
template = os.environ["PROCTOR_OUTPUT_TEMPLATE"]
cases = Path(os.environ["PROCTOR_CASES_FILE"]).read_text().split()
rows = {}
for case in cases:
    truth = numbers(reference / f"{case}.txt")
    try:
        guess = numbers(outputs / template.format(record=case))
        if guess.shape != truth.shape or not np.isfinite(guess).all():
            raise ValueError("wrong count")
    except (OSError, ValueError):
        guess = np.zeros_like(truth)
    errors = np.abs(guess - truth)
    rows[case] = {"mae": float(errors.mean()), "within_1": float((errors <= 1).mean())}
scores = {
    "mae": float(np.mean([row["mae"] for row in rows.values()])),
    "within_1": float(np.mean([row["within_1"] for row in rows.values()])),
    "cases": rows,
}
Path(os.environ["PROCTOR_SCORES_DIR"], "scores.json").write_text(json.dumps(scores))
print(f"scored {len(rows)} cases")
'''

ONE_NUMBER_CHECK = '''\
"""Is one case's output usable? Exit 0 if so; else say why on stderr (the participant sees it)."""
import math
import sys

text = open(sys.argv[1], encoding="utf-8", errors="replace").read().strip()
try:
    value = float(text)
except ValueError:
    sys.exit(f"expected one number, found {text[:30]!r}")
if not math.isfinite(value):
    sys.exit(f"expected a finite number, found {text[:30]!r}")
'''

TABLE_SCORE = '''\
"""Score predictions.csv (id,target) against the reference labels.csv: MAE and share within 1.

Reads $PROCTOR_CASES_FILE, $PROCTOR_OUTPUTS/<case>/predictions.csv and
$PROCTOR_REFERENCE/<case>/labels.csv; writes $PROCTOR_SCORES_DIR/scores.json. An id without a
prediction is scored as if predicted 0.
"""
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

reference = Path(os.environ["PROCTOR_REFERENCE"])
outputs = Path(os.environ["PROCTOR_OUTPUTS"])
cases = Path(os.environ["PROCTOR_CASES_FILE"]).read_text().split()
rows = {}
errors_all = []
for case in cases:
    truth = pd.read_csv(reference / case / "labels.csv", index_col="id")["target"]
    guess = pd.read_csv(outputs / case / "predictions.csv", index_col="id")["target"]
    guess = guess[~guess.index.duplicated()].reindex(truth.index).fillna(0.0)
    errors = np.abs(guess.to_numpy(float) - truth.to_numpy(float))
    errors_all.append(errors)
    rows[case] = {"mae": float(errors.mean()), "within_1": float((errors <= 1).mean())}
errors = np.concatenate(errors_all)
scores = {"mae": float(errors.mean()), "within_1": float((errors <= 1).mean()), "cases": rows}
Path(os.environ["PROCTOR_SCORES_DIR"], "scores.json").write_text(json.dumps(scores))
'''

TABLE_CHECK = '''\
"""Is one case's upload usable? predictions.csv with columns id,target and numbers."""
import csv
import math
import sys
from pathlib import Path

path = Path(sys.argv[1]) / "predictions.csv"
if not path.is_file():
    sys.exit("predictions.csv is missing")
with path.open(newline="", encoding="utf-8") as handle:
    reader = csv.reader(handle)
    header = next(reader, None)
    if header != ["id", "target"]:
        sys.exit(f"predictions.csv: the header must be id,target (found {header})")
    for number, row in enumerate(reader, start=2):
        try:
            ok = len(row) == 2 and math.isfinite(float(row[1]))
        except ValueError:
            ok = False
        if not ok:
            sys.exit(f"predictions.csv line {number}: expected id,number")
'''

DICE_SCORE = '''\
"""Score each case's mask against the reference mask: Dice, and the share of cases over 0.5.

Reads $PROCTOR_CASES_FILE, $PROCTOR_OUTPUTS/<case>/1.nii.gz (the stored mask of task id 1)
and $PROCTOR_REFERENCE/<case>.nii.gz; writes $PROCTOR_SCORES_DIR/scores.json. A case without
a mask scores 0.
"""
import json
import os
from pathlib import Path

import nibabel as nib
import numpy as np

reference = Path(os.environ["PROCTOR_REFERENCE"])
outputs = Path(os.environ["PROCTOR_OUTPUTS"])
cases = Path(os.environ["PROCTOR_CASES_FILE"]).read_text().split()
rows = {}
for case in cases:
    truth = np.asarray(nib.load(reference / f"{case}.nii.gz").dataobj) > 0.5
    mask_file = outputs / case / "1.nii.gz"
    mask = np.asarray(nib.load(mask_file).dataobj) > 0.5 if mask_file.is_file() else truth & False
    both = truth.sum() + mask.sum()
    dice = 2.0 * (truth & mask).sum() / both if both else 1.0
    rows[case] = {"dice": float(dice), "over_half": float(dice > 0.5)}
scores = {
    "dice": float(np.mean([row["dice"] for row in rows.values()])),
    "over_half": float(np.mean([row["over_half"] for row in rows.values()])),
    "cases": rows,
}
Path(os.environ["PROCTOR_SCORES_DIR"], "scores.json").write_text(json.dumps(scores))
'''

SUM_NEXT = """#!/bin/sh
# next.sh RECORD: the sum of the record's numbers, written to RECORD.answer
python3 -c 'import sys; print(sum(float(x) for x in open(sys.argv[1]).read().split()))' \\
    "$PROCTOR_DATA/$1.txt" > "$1.answer"
"""

MODEL_PY = '''\
"""A least-squares line through the training rows (numpy only)."""
import json
import os

import numpy as np


class Model:
    def __init__(self, info):
        self.info = info
        self.weights = None

    def train(self, X, y):
        design = np.column_stack([X.to_numpy(float), np.ones(len(X))])
        self.weights = np.linalg.lstsq(design, y.to_numpy(float), rcond=None)[0]

    def save(self, directory):
        with open(os.path.join(directory, "weights.json"), "w") as handle:
            json.dump(self.weights.tolist(), handle)

    def load(self, directory):
        with open(os.path.join(directory, "weights.json")) as handle:
            self.weights = np.array(json.load(handle))

    def predict(self, X):
        return np.column_stack([X.to_numpy(float), np.ones(len(X))]) @ self.weights
'''

EXECUTE_STANDARD = '''\
#!/usr/bin/env python3
"""execute_standard INPUT.nii.gz OUTDIR: the voxels over 0.5, as the mask of task id 1."""
import os
import sys

import nibabel as nib
import numpy as np

source, outdir = sys.argv[1], sys.argv[2]
image = nib.load(source)
mask = (np.asarray(image.dataobj) > 0.5).astype(np.uint8)
case = os.path.basename(source)[: -len(".nii.gz")]
nib.save(nib.Nifti1Image(mask, image.affine), os.path.join(outdir, f"{case}_1_baseline_1.nii.gz"))
'''


def _numbers(values: list[float]) -> str:
    return "".join(f"{value!r}\n" for value in values)


def _truth(case: str, values: list[float]) -> float:
    return sum(values) + OFFSETS.get(case, 0.0)


def records_files() -> Files:
    """A records challenge: ``next.sh RECORD`` writes the sum of the record's numbers."""
    files: Files = {}
    for split, cases in (("public", PUBLIC), ("hidden", HIDDEN)):
        files[f"data/{split}/RECORDS"] = "".join(f"{case}\n" for case in cases)
        for case, values in cases.items():
            files[f"data/{split}/{case}.txt"] = _numbers(values)
    for case, values in HIDDEN.items():
        files[f"data/reference/{case}.txt"] = f"{_truth(case, values)!r}\n"
    files["stand-in/inputs/RECORDS"] = "".join(f"{case}\n" for case in STAND_IN)
    for case, values in STAND_IN.items():
        files[f"stand-in/inputs/{case}.txt"] = _numbers(values)
        files[f"stand-in/references/{case}.txt"] = f"{_truth(case, values)!r}\n"
    files["baseline/setup.sh"] = "#!/bin/sh\n# nothing to build\ntrue\n"
    files["baseline/next.sh"] = SUM_NEXT
    for case, values in PUBLIC.items():
        files[f"baseline/answers/{case}.answer"] = f"{sum(values)!r}\n"
    files["scoring/score.py"] = NUMBERS_SCORE
    files["scoring/check.py"] = ONE_NUMBER_CHECK
    return files


def _table(values: list[float]) -> tuple[str, str]:
    """A dataset's rows (x1, x2) from its numbers, and the label of each row."""
    rows = [(value, 2.0 * index) for index, value in enumerate(values)]
    return (
        "x1\tx2\n" + "".join(f"{x1!r}\t{x2!r}\n" for x1, x2 in rows),
        "label\n" + "".join(f"{3.0 * x1 - x2 + 1.0!r}\n" for x1, x2 in rows),
    )


def python_model_files() -> Files:
    """A python_model challenge: ``model.py`` fits each dataset's rows, then predicts."""
    files: Files = {}
    info = {"task": "regression", "schema": {"x1": "num", "x2": "num"}}
    places = (("data/public", PUBLIC), ("data/hidden", HIDDEN), ("stand-in/inputs", STAND_IN))
    for split, cases in places:
        for case, values in cases.items():
            train, labels = _table(values * 3)
            test, test_labels = _table([v + 0.5 for v in values])
            folder = f"{split}/{case}"
            files[f"{folder}/info.json"] = json.dumps(
                {**info, "name": case, "time_budget": 60, "pred_time_budget": 30}, indent=2
            )
            files[f"{folder}/train.data"] = train
            files[f"{folder}/train.solution"] = labels
            files[f"{folder}/test.data"] = test
            if split != "data/public":
                noisy = test_labels.splitlines()
                offset = OFFSETS.get(case, 0.0)
                shifted = [noisy[0], *(f"{float(v) + offset!r}" for v in noisy[1:])]
                reference = "data/reference" if split == "data/hidden" else "stand-in/references"
                files[f"{reference}/{case}.txt"] = "\n".join(shifted) + "\n"
    files["baseline/model.py"] = MODEL_PY
    files["scoring/score.py"] = NUMBERS_SCORE
    return files


def _predictions_table(values: list[float], offset: float = 0.0) -> tuple[str, str, str]:
    """(inputs.csv, labels.csv, the baseline's predictions.csv) of one split."""
    rows = [(f"r{index:03d}", value, 1.0 + index % 3) for index, value in enumerate(values)]
    inputs = "id,x1,x2\n" + "".join(f"{i},{a!r},{b!r}\n" for i, a, b in rows)
    labels = "id,target\n" + "".join(f"{i},{a + 2 * b + offset!r}\n" for i, a, b in rows)
    guess = "id,target\n" + "".join(f"{i},{a + 2 * b!r}\n" for i, a, b in rows)
    return inputs, labels, guess


def predictions_files() -> Files:
    """A predictions challenge: participants upload ``predictions.csv`` for dev and test."""
    dev_values = [v for values in PUBLIC.values() for v in values]
    test_values = [v for values in HIDDEN.values() for v in values]
    dev_inputs, dev_labels, dev_guess = _predictions_table(dev_values)
    test_inputs, test_labels, test_guess = _predictions_table(test_values, 0.3)
    return {
        "data/dev/values/inputs.csv": dev_inputs,
        "data/dev/values/labels.csv": dev_labels,
        "data/test/values/inputs.csv": test_inputs,
        "data/test-reference/values/labels.csv": test_labels,
        # the stand-in: the public test inputs, with made-up labels of the same rows
        "stand-in/inputs/values/inputs.csv": test_inputs,
        "stand-in/references/values/labels.csv": _predictions_table(test_values, -0.2)[1],
        "baseline/dev/values/predictions.csv": dev_guess,
        "baseline/test/values/predictions.csv": test_guess,
        "scoring/score.py": TABLE_SCORE,
        "scoring/check.py": TABLE_CHECK,
    }


def _nifti(volume: np.ndarray) -> bytes:
    import nibabel as nib

    image = nib.Nifti1Image(volume, np.eye(4))  # type: ignore[no-untyped-call]
    raw = io.BytesIO()
    file_map = nib.Nifti1Image.make_file_map({"image": raw, "header": raw})
    image.to_file_map(file_map)  # type: ignore[no-untyped-call]
    return gzip.compress(raw.getvalue(), mtime=0)


def _volume(case: str, size: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """A noisy bright ball (the input) and its true mask (the reference)."""
    seed = sum(ord(c) for c in case)
    rng = np.random.default_rng(seed)
    grid = np.indices((size, size, size)).astype(float)
    centre = size / 2 + (seed % 3) - 1
    radius = 3.0 + seed % 2
    mask = ((grid - centre) ** 2).sum(axis=0) <= radius**2
    image = mask * 0.8 + rng.normal(0.0, 0.2, mask.shape)
    return image.astype(np.float32), mask.astype(np.uint8)


def command_files() -> Files:
    """A command challenge: ``execute_standard INPUT OUTDIR`` writes one NIfTI mask per case."""
    files: Files = {}
    places = (("data/public", PUBLIC), ("data/hidden", HIDDEN), ("stand-in/inputs", STAND_IN))
    for split, cases in places:
        for case in cases:
            # the stand-in's grid differs: its masks are never the bytes of a hidden one
            image, mask = _volume(case, 12 if split != "stand-in/inputs" else 10)
            files[f"{split}/{case}.nii.gz"] = _nifti(image)
            if split != "data/public":
                reference = "data/reference" if split == "data/hidden" else "stand-in/references"
                files[f"{reference}/{case}.nii.gz"] = _nifti(mask)
    files["baseline/execute_standard"] = EXECUTE_STANDARD
    files["scoring/score.py"] = DICE_SCORE
    return files


TEMPLATES: dict[str, Callable[[], Files]] = {
    "records": records_files,
    "command": command_files,
    "python_model": python_model_files,
    "physionet_model": physionet_model_files,
    "predictions": predictions_files,
}
EXECUTABLE = frozenset({"baseline/setup.sh", "baseline/next.sh", "baseline/execute_standard"})


def write_files(dest: Path, files: Files) -> list[Path]:
    """Write ``files`` (relative path → text or bytes) under ``dest``."""
    written = []
    for relative, content in files.items():
        path = dest / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        if relative in EXECUTABLE:
            path.chmod(0o755)
        written.append(path)
    return written
