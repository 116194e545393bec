"""Fit the baseline's thresholds on the training records and write ``model.json``.

Usage: ``python3 train.py DATA_DIR [--out model.json]``, where ``DATA_DIR`` holds ``RECORDS``,
``REFERENCE.csv`` and the records (the public training folder). Standard library only.

The features come from ``classify.py`` itself, so training and prediction cannot drift apart.
Each threshold is searched over the midpoints between the training values of its feature,
one at a time, keeping the value that maximizes the 2017 score (mean F1 of N, A and O; ties go
to the smaller value), for a few rounds. The search is deterministic, and the thresholds are
rounded to 6 decimals, so refitting reproduces ``model.json`` byte for byte.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROUNDS = 3
START = {"busy": 1.0, "irregular": 10.0, "jumps": 1.0, "rate_low": 0.0, "rate_high": 1000.0}
FEATURE_OF = {
    "busy": "busy",
    "irregular": "irregular",
    "jumps": "jumps",
    "rate_low": "rate",
    "rate_high": "rate",
}


def load_classify() -> ModuleType:
    """Import ``classify.py`` from beside this file (the entry is a folder, not a package)."""
    spec = importlib.util.spec_from_file_location("baseline_classify", HERE / "classify.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {HERE / 'classify.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def score_2017(truth: list[str], answers: list[str]) -> float:
    """Mean F1 of N, A and O: F1 = 2·hits / (true count + answered count)."""
    total = 0.0
    for label in "NAO":
        hits = sum(t == a == label for t, a in zip(truth, answers, strict=True))
        denominator = truth.count(label) + answers.count(label)
        total += 2.0 * hits / denominator if denominator else 0.0
    return total / 3.0


def candidates(values: list[float]) -> list[float]:
    """Midpoints between consecutive distinct values, and one beyond each end."""
    ordered = sorted(set(values))
    mids = [(a + b) / 2.0 for a, b in itertools.pairwise(ordered)]
    return [ordered[0] - 1.0, *mids, ordered[-1] + 1.0]


def fit(rows: list[dict[str, float]], truth: list[str], classify: ModuleType) -> dict[str, float]:
    """Coordinate-wise search of the thresholds maximizing the training score."""
    model = dict(START)
    for _ in range(ROUNDS):
        for name in classify.THRESHOLDS:
            best = (-1.0, model[name])
            for value in candidates([row[FEATURE_OF[name]] for row in rows]):
                trial = {**model, name: value}
                answers = [classify.decide(row, trial) for row in rows]
                score = score_2017(truth, answers)
                if score > best[0]:
                    best = (score, value)
            model[name] = best[1]
    return {name: round(model[name], 6) for name in classify.THRESHOLDS}


def main(argv: list[str] | None = None) -> int:
    """``train.py DATA_DIR [--out PATH]``: fit and write the thresholds."""
    parser = argparse.ArgumentParser(description="Fit the physionet2017 baseline thresholds.")
    parser.add_argument("data_dir", type=Path, help="folder with RECORDS, REFERENCE.csv, records")
    parser.add_argument("--out", type=Path, default=HERE / "model.json")
    args = parser.parse_args(argv)
    classify = load_classify()
    reference = dict(
        line.strip().split(",") for line in (args.data_dir / "REFERENCE.csv").read_text().split()
    )
    records = (args.data_dir / "RECORDS").read_text().split()
    rows = [classify.features(*classify.read_record(args.data_dir, r)) for r in records]
    truth = [reference[r] for r in records]
    model = fit(rows, truth, classify)
    args.out.write_text(json.dumps(model, indent=2) + "\n")
    answers = [classify.decide(row, model) for row in rows]
    print(f"{args.out}: training score {score_2017(truth, answers):.4f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
