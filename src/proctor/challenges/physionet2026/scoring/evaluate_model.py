#!/usr/bin/env python
"""Score PhysioNet 2026 outputs: the physionet2026 challenge's scoring program (Proctor's own).

As a PhysioNet ``evaluate_model.py``::

    python evaluate_model.py -d LABELS.csv... -o OUTPUTS.csv... -p PREVALENCE.csv... [-s SCORES]

and, with no arguments, as Proctor's scoring program: the labels of each case are
``$PROCTOR_REFERENCE/CASE.csv``, its outputs the table run_model.py wrote
(``$PROCTOR_OUTPUTS``, named by ``$PROCTOR_OUTPUT_TEMPLATE``; a case without one counts as
having no output), the prevalence ``prevalence.csv`` beside this program (the training
labels and ages); the scores go to
``$PROCTOR_SCORES_DIR/scores.json``.

A session is named by its SiteID and BDSPPatientID. A session without an output, or whose
outputs are not a 0/1 and a finite number, is scored as a negative with probability 0, as the
organizers do. Metrics: the reward (each right positive earns 1/p - 1 and each right negative
1/(1-p) - 1, each wrong prediction -1, averaged; p is the share of positives among training
patients at most 2 years apart in age), the AUROC over pairs at most 2 years apart in age, the
AUROC, the average precision (AUPRC), the accuracy and the F-measure.
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import pandas as pd

SITE, PATIENT, AGE = "SiteID", "BDSPPatientID", "Age"
LABEL = "Cognitive_Impairment"
BINARY, PROBABILITY = "Cognitive_Impairment", "Cognitive_Impairment_Probability"
AGE_GAP = 2


def _truth(value):
    """1.0, 0.0 or NaN for a cell that spells a boolean, or not."""
    if isinstance(value, str):
        word = value.strip().casefold()
        return (
            1.0
            if word in ("true", "1", "1.0")
            else 0.0
            if word in ("false", "0", "0.0")
            else math.nan
        )
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number if number in (0.0, 1.0) else math.nan


def _keyed(frames):
    table = pd.concat(frames).drop_duplicates()
    table.index = table[SITE].astype(str) + "_" + table[PATIENT].astype(str)
    return table[~table.index.duplicated()]


def _number(value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number


def prevalence_at(ages, prevalence_labels, prevalence_ages):
    """The share of positives among prevalence patients within AGE_GAP years of each age."""
    shares = {}
    for age in set(ages[np.isfinite(ages)]):
        near = prevalence_labels[np.abs(prevalence_ages - age) <= AGE_GAP]
        if len(near):
            shares[age] = max(near.sum(), 0.5) / len(near)
    return shares


def reward(labels, binary, ages, shares):
    """The prevalence-weighted reward of the binary predictions (0: a constant guess)."""
    total, counted = 0.0, 0
    bound = 0.5 / len(labels)
    for label, guess, age in zip(labels, binary, ages, strict=True):
        if not np.isfinite(age) or age not in shares:
            continue
        p = min(max(shares[age], bound), 1 - bound)
        if guess != label:
            total -= 1
        elif label == 1:
            total += 1 / p - 1
        else:
            total += 1 / (1 - p) - 1
        counted += 1
    return total / counted if counted else math.nan


def pair_auroc(labels, scores, ages=None):
    """The share of (positive, negative) pairs ranked right (ties count half); NaN without any.

    With ``ages``, only pairs at most AGE_GAP years apart are counted.
    """
    positives = np.flatnonzero(labels == 1)
    negatives = np.flatnonzero(labels == 0)
    right = pairs = 0.0
    for i in positives:
        for j in negatives:
            if ages is not None and abs(ages[i] - ages[j]) > AGE_GAP:
                continue
            right += 1.0 if scores[i] > scores[j] else 0.5 if scores[i] == scores[j] else 0.0
            pairs += 1
    return right / pairs if pairs else math.nan


def average_precision(labels, scores):
    """The precision averaged over the recall steps of the ranking by score (ties together)."""
    positives = labels.sum()
    if positives == 0:
        return math.nan
    total, seen_true, seen = 0.0, 0.0, 0
    for threshold in np.unique(scores)[::-1]:
        chosen = scores == threshold
        hits = labels[chosen].sum()
        seen_true += hits
        seen += chosen.sum()
        total += (hits / positives) * (seen_true / seen)
    return float(total)


def evaluate(labels_table, outputs_table, prevalence_table):
    """Every metric of the outputs against the labels, and the counts."""
    scored = labels_table[labels_table[LABEL].map(_truth).isin((0.0, 1.0))]
    labels = scored[LABEL].map(_truth).to_numpy(dtype=float)
    ages = scored[AGE].map(_number).to_numpy(dtype=float)
    binary = np.zeros(len(scored))
    probability = np.zeros(len(scored))
    missing = 0
    for row, key in enumerate(scored.index):
        guess = _truth(outputs_table.at[key, BINARY]) if key in outputs_table.index else math.nan
        prob = (
            _number(outputs_table.at[key, PROBABILITY]) if key in outputs_table.index else math.nan
        )
        if math.isnan(guess) or not math.isfinite(prob):
            missing += 1
        binary[row] = 0.0 if math.isnan(guess) else guess
        probability[row] = prob if math.isfinite(prob) else 0.0
    known = prevalence_table[prevalence_table[LABEL].map(_truth).isin((0.0, 1.0))]
    shares = prevalence_at(
        ages,
        known[LABEL].map(_truth).to_numpy(dtype=float),
        known[AGE].map(_number).to_numpy(dtype=float),
    )
    tp = float(np.sum((labels == 1) & (binary == 1)))
    fp = float(np.sum((labels == 0) & (binary == 1)))
    fn = float(np.sum((labels == 1) & (binary == 0)))
    return {
        "reward": reward(labels, binary, ages, shares),
        "auroc_age": pair_auroc(labels, probability, ages),
        "auroc": pair_auroc(labels, probability),
        "auprc": average_precision(labels, probability),
        "accuracy": float(np.mean(labels == binary)) if len(labels) else math.nan,
        "f_measure": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else math.nan,
        "sessions": float(len(labels)),
        "sessions_without_output": float(missing),
    }


def _empty_outputs():
    return pd.DataFrame(columns=[SITE, PATIENT, BINARY, PROBABILITY])


def _read_outputs(path):
    if not os.path.isfile(path):
        return _empty_outputs()
    try:
        table = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):
        return _empty_outputs()
    if not {SITE, PATIENT, BINARY, PROBABILITY} <= set(table.columns):
        return _empty_outputs()
    return table


def as_scoring_program():
    reference = os.environ["PROCTOR_REFERENCE"]
    outputs = os.environ["PROCTOR_OUTPUTS"]
    template = os.environ["PROCTOR_OUTPUT_TEMPLATE"]
    with open(os.environ["PROCTOR_CASES_FILE"], encoding="utf-8") as handle:
        cases = [line.strip() for line in handle if line.strip()]
    labels = _keyed([pd.read_csv(os.path.join(reference, f"{case}.csv")) for case in cases])
    found = [_read_outputs(os.path.join(outputs, template.format(record=case))) for case in cases]
    here = os.path.dirname(os.path.abspath(__file__))
    prevalence = _keyed([pd.read_csv(os.path.join(here, "prevalence.csv"))])
    scores = evaluate(labels, _keyed(found), prevalence)
    scores = {name: (value if math.isfinite(value) else 0.0) for name, value in scores.items()}
    with open(os.path.join(os.environ["PROCTOR_SCORES_DIR"], "scores.json"), "w") as handle:
        json.dump(scores, handle, indent=2)


def as_command(argv):
    parser = argparse.ArgumentParser(description="Evaluate the challenge model's outputs.")
    parser.add_argument("-d", "--labels_files", nargs="+", required=True)
    parser.add_argument("-o", "--predictions_files", nargs="+", required=True)
    parser.add_argument("-p", "--prevalence_files", nargs="+", required=True)
    parser.add_argument("-s", "--score_file")
    args = parser.parse_args(argv)
    scores = evaluate(
        _keyed([pd.read_csv(f) for f in args.labels_files]),
        _keyed([_read_outputs(f) for f in args.predictions_files]),
        _keyed([pd.read_csv(f) for f in args.prevalence_files]),
    )
    text = "".join(f"{name}: {value:.3f}\n" for name, value in scores.items())
    if args.score_file:
        with open(args.score_file, "w") as handle:
            handle.write(text)
    else:
        print(text, end="")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        as_command(sys.argv[1:])
    else:
        as_scoring_program()
