"""The ``physionet_model`` template of ``proctor challenge new``: a PhysioNet 2020–2026 challenge.

A toy binary diagnosis from one short signal per session, laid out as the PhysioNet/CinC
Challenges since 2020 lay out theirs: the challenge's own ``scripts/`` (``train_model.py``,
``run_model.py``, ``helper_code.py``) drive the entry's ``team_code.py``, trained once on the
public ``training`` folder, then run on each hidden folder; ``scoring/score.py`` scores the
table ``run_model.py`` writes. The baseline entry is a ``team_code.py``, a ``Dockerfile``
``FROM python:3.10.1-buster`` (mapped by the challenge to its declared environment where entry
images are built) and a ``requirements.txt`` whose one pin the environment already holds.
"""

from __future__ import annotations

Files = dict[str, str | bytes]

TRAINING = {
    "p101": [0.2, 0.4, 0.1, 0.3],
    "p102": [1.6, 1.2, 1.9, 1.4],
    "p103": [0.5, 0.7, 0.4],
    "p104": [2.1, 1.8, 2.4, 2.0, 1.7],
    "p105": [0.9, 0.6, 0.8],
    "p106": [1.3, 1.5, 1.1, 1.6],
}
HIDDEN = {
    "h201": [0.3, 0.5, 0.2],
    "h202": [1.9, 1.7, 2.2, 1.8],
    "h203": [1.1, 0.9, 1.2],
    "h204": [0.4, 0.3, 0.6, 0.5],
    "h205": [1.4, 1.6, 1.3],
}
STAND_IN = {"s301": [0.6, 0.2, 0.4], "s302": [1.7, 2.0, 1.5], "s303": [1.0, 1.3, 0.8]}
"""The public stand-in for the hidden sessions: the starting kit's replica scores on it."""
CUT = 1.0
"""A session is positive when its signal's mean is over this (the model must learn it)."""
AGES = (54, 61, 47, 70, 66, 58)

HELPER_CODE = '''\
"""Reading a data folder and writing the outputs: the challenge's code, shared by its scripts.

A data folder holds sessions.csv (one row per session: Patient, Age and, in the training folder
only, Label) and signals/PATIENT.txt (the session's signal, one number per line).
"""
import csv
import math
import os

SESSIONS_FILE = "sessions.csv"
SIGNALS = "signals"
OUTPUT_COLUMNS = ("Positive", "Probability")


def load_sessions(data_folder):
    """The rows of the folder's sessions.csv, as dictionaries."""
    with open(os.path.join(data_folder, SESSIONS_FILE), newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def load_signal(data_folder, patient):
    """The session's signal: a list of floats."""
    path = os.path.join(data_folder, SIGNALS, patient + ".txt")
    with open(path, encoding="utf-8") as handle:
        return [float(line) for line in handle if line.strip()]


def load_label(row):
    """The training label of a session row: True or False."""
    return row["Label"].strip() == "1"


def is_finite_number(value):
    """Whether ``value`` is a real number that is not NaN or infinite."""
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def write_outputs(rows, results, output_folder):
    """Write sessions.csv to output_folder with each row's outputs; the path written."""
    path = os.path.join(output_folder, SESSIONS_FILE)
    columns = [name for name in rows[0] if name != "Label"] + list(OUTPUT_COLUMNS)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            positive, probability = results[row["Patient"]]
            writer.writerow({**row, "Positive": positive, "Probability": probability})
    return path
'''

TRAIN_SCRIPT = '''\
#!/usr/bin/env python3
"""The challenge's training script (it replaces any copy in the entry):

    python3 train_model.py -d DATA_FOLDER -m MODEL_FOLDER [-v]

calls team_code.train_model(data_folder, model_folder, verbose).
"""
import argparse
import os

from team_code import train_model

parser = argparse.ArgumentParser(description="Train the entry's model.")
parser.add_argument("-d", "--data_folder", required=True)
parser.add_argument("-m", "--model_folder", required=True)
parser.add_argument("-v", "--verbose", action="store_true")
args = parser.parse_args()
os.makedirs(args.model_folder, exist_ok=True)
train_model(args.data_folder, args.model_folder, args.verbose)
'''

RUN_SCRIPT = '''\
#!/usr/bin/env python3
"""The challenge's run script (it replaces any copy in the entry):

    python3 run_model.py -d DATA_FOLDER -m MODEL_FOLDER -o OUTPUT_FOLDER [-v] [-f]

loads the model once (team_code.load_model), calls team_code.run_model for each session of
DATA_FOLDER/sessions.csv and writes OUTPUT_FOLDER/sessions.csv with two columns more: Positive
(0 or 1) and Probability. With -f a session whose run fails gets empty outputs instead of
stopping the run.
"""
import argparse
import os

from helper_code import is_finite_number, load_sessions, write_outputs
from team_code import load_model, run_model

parser = argparse.ArgumentParser(description="Run the trained model on a data folder.")
parser.add_argument("-d", "--data_folder", required=True)
parser.add_argument("-m", "--model_folder", required=True)
parser.add_argument("-o", "--output_folder", required=True)
parser.add_argument("-v", "--verbose", action="store_true")
parser.add_argument("-f", "--allow_failures", action="store_true")
args = parser.parse_args()

model = load_model(args.model_folder, args.verbose)
rows = load_sessions(args.data_folder)
os.makedirs(args.output_folder, exist_ok=True)
results = {}
for row in rows:
    try:
        positive, probability = run_model(model, row, args.data_folder, args.verbose)
        if not is_finite_number(probability):
            raise ValueError(f"run_model gave {probability!r}, not a finite probability")
        results[row["Patient"]] = (int(bool(positive)), float(probability))
    except Exception as error:
        if not args.allow_failures:
            raise
        if args.verbose:
            print(f"{row['Patient']}: failed ({type(error).__name__})")
        results[row["Patient"]] = ("", "")
print("wrote", write_outputs(rows, results, args.output_folder))
'''

TEAM_CODE = '''\
"""The baseline's team code: a threshold on the mean of each session's signal.

Edit the three functions; keep their names and arguments (the challenge's train_model.py and
run_model.py call them).
"""
import json
import math
import os

import numpy as np

from helper_code import load_label, load_sessions, load_signal

MODEL_FILE = "threshold.json"


def train_model(data_folder, model_folder, verbose):
    """Learn the cut between the classes' mean signal levels; save it in model_folder."""
    levels = {True: [], False: []}
    for row in load_sessions(data_folder):
        level = float(np.mean(load_signal(data_folder, row["Patient"])))
        levels[load_label(row)].append(level)
    cut = (np.mean(levels[True]) + np.mean(levels[False])) / 2
    with open(os.path.join(model_folder, MODEL_FILE), "w") as handle:
        json.dump({"cut": float(cut)}, handle)
    if verbose:
        print(f"trained: cut at {cut:.3f}")


def load_model(model_folder, verbose):
    """Read back what train_model saved."""
    with open(os.path.join(model_folder, MODEL_FILE)) as handle:
        return json.load(handle)


def run_model(model, record, data_folder, verbose):
    """The session's (positive, probability)."""
    level = float(np.mean(load_signal(data_folder, record["Patient"])))
    probability = 1 / (1 + math.exp(-4 * (level - model["cut"])))
    return probability >= 0.5, probability
'''

DOCKERFILE = """\
# The challenge maps this base to its own environment: keep it, or ask the organizers.
FROM python:3.10.1-buster

# The challenge's scripts expect your code in /challenge, the working folder of every run.
RUN mkdir /challenge
COPY ./ /challenge
WORKDIR /challenge

# Your system packages would go here (RUN apt-get install -y ...), where the challenge allows.

RUN pip install -r requirements.txt
"""

REQUIREMENTS = "numpy==2.4.6\n"
"""A pin the declared environment already holds: nothing is downloaded."""

SCORE = '''\
"""Score each hidden folder's sessions.csv against the labels: accuracy and AUROC.

Reads $PROCTOR_CASES_FILE (the folders), $PROCTOR_OUTPUTS/<output of the folder> (named by
$PROCTOR_OUTPUT_TEMPLATE) and $PROCTOR_REFERENCE/<folder>.csv (Patient,Label); writes
$PROCTOR_SCORES_DIR/scores.json. A session without a usable output counts as negative with a
probability of 0.
"""
import csv
import json
import math
import os
from pathlib import Path

import numpy as np


def table(path):
    """Patient -> row of a CSV file; empty when the file is missing."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            return {row["Patient"]: row for row in csv.DictReader(handle)}
    except (OSError, KeyError, csv.Error):
        return {}


def number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def auroc(labels, probabilities):
    """The share of (positive, negative) pairs ranked right; ties count a half."""
    positives = probabilities[labels]
    negatives = probabilities[~labels]
    if not len(positives) or not len(negatives):
        return 0.5
    wins = (positives[:, None] > negatives[None, :]).sum()
    ties = (positives[:, None] == negatives[None, :]).sum()
    return float((wins + 0.5 * ties) / (len(positives) * len(negatives)))


reference = Path(os.environ["PROCTOR_REFERENCE"])
outputs = Path(os.environ["PROCTOR_OUTPUTS"])
template = os.environ["PROCTOR_OUTPUT_TEMPLATE"]
folders = Path(os.environ["PROCTOR_CASES_FILE"]).read_text().split()
labels, guesses, probabilities, missing = [], [], [], 0
for folder in folders:
    given = table(outputs / template.format(record=folder))
    for patient, row in table(reference / f"{folder}.csv").items():
        answer = given.get(patient, {})
        positive, probability = number(answer.get("Positive")), number(answer.get("Probability"))
        if positive is None or probability is None:
            missing += 1
            positive, probability = 0.0, 0.0
        labels.append(row["Label"].strip() == "1")
        guesses.append(positive >= 0.5)
        probabilities.append(probability)
truth = np.array(labels, dtype=bool)
scores = {
    "accuracy": float((np.array(guesses, dtype=bool) == truth).mean()),
    "auroc": auroc(truth, np.array(probabilities, dtype=float)),
    "sessions_without_output": missing,
}
Path(os.environ["PROCTOR_SCORES_DIR"], "scores.json").write_text(json.dumps(scores))
print(f"scored {len(labels)} sessions")
'''


def _label(signal: list[float]) -> int:
    return int(sum(signal) / len(signal) > CUT)


def _folder(prefix: str, sessions: dict[str, list[float]], *, labelled: bool) -> Files:
    """A data folder: sessions.csv and one signal file per session."""
    header = "Patient,Age,Label\n" if labelled else "Patient,Age\n"
    rows = []
    files: Files = {}
    for index, (patient, signal) in enumerate(sessions.items()):
        age = AGES[index % len(AGES)]
        rows.append(f"{patient},{age},{_label(signal)}\n" if labelled else f"{patient},{age}\n")
        files[f"{prefix}/signals/{patient}.txt"] = "".join(f"{value!r}\n" for value in signal)
    files[f"{prefix}/sessions.csv"] = header + "".join(rows)
    return files


def _labels(sessions: dict[str, list[float]]) -> str:
    return "Patient,Label\n" + "".join(f"{p},{_label(s)}\n" for p, s in sessions.items())


def physionet_model_files() -> Files:
    """A physionet_model challenge: the challenge's scripts run the entry's ``team_code.py``."""
    return {
        **_folder("data/public/training", TRAINING, labelled=True),
        **_folder("data/hidden/test", HIDDEN, labelled=False),
        "data/reference/test.csv": _labels(HIDDEN),
        **_folder("stand-in/inputs/holdout", STAND_IN, labelled=False),
        "stand-in/references/holdout.csv": _labels(STAND_IN),
        "scripts/helper_code.py": HELPER_CODE,
        "scripts/train_model.py": TRAIN_SCRIPT,
        "scripts/run_model.py": RUN_SCRIPT,
        "baseline/team_code.py": TEAM_CODE,
        "baseline/Dockerfile": DOCKERFILE,
        "baseline/requirements.txt": REQUIREMENTS,
        "scoring/score.py": SCORE,
    }
