"""Fit the baseline's logistic model on the training records and write ``model.json``.

Usage: ``python train.py DATA_DIR [--out model.json]``, where ``DATA_DIR`` holds ``RECORDS`` and,
per record, ``.hea``, ``.mat`` and ``-arousal.mat`` (the public training folder). This runs on
the participant's machine, so it may use numpy and h5py; ``classify.py`` (which runs inside the
sandbox) computes the features, so training and prediction cannot drift apart.

One sample per 0.25 s block is used: the label at the block's centre; not-scored samples (−1)
are left out. The fit is Newton's method with a small ridge penalty, deterministic, and the
coefficients are rounded to 6 decimals so that refitting reproduces ``model.json`` byte for byte.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import h5py
import numpy as np
import numpy.typing as npt

HERE = Path(__file__).resolve().parent
RIDGE = 1e-2
ITERATIONS = 30

Matrix = npt.NDArray[np.float64]


def load_classify() -> ModuleType:
    """Import ``classify.py`` from beside this file (the entry is a folder, not a package)."""
    spec = importlib.util.spec_from_file_location("baseline_classify", HERE / "classify.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {HERE / 'classify.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_labels(path: Path) -> Matrix:
    """The per-sample label vector of a ``-arousal.mat`` file (HDF5 dataset ``data/arousals``)."""
    with h5py.File(path, "r") as handle:
        return np.asarray(handle["data"]["arousals"][()], dtype=np.float64).ravel()


def training_set(data_dir: Path) -> tuple[Matrix, Matrix]:
    """Feature rows and 0/1 targets of every scored block of every record in ``RECORDS``."""
    classify = load_classify()
    rows: list[list[float]] = []
    targets: list[float] = []
    for record in (data_dir / "RECORDS").read_text().split():
        length, features = classify.record_features(data_dir, record)
        labels = read_labels(data_dir / f"{record}-arousal.mat")
        if len(labels) != length:
            raise ValueError(f"{record}: {len(labels)} labels for {length} samples")
        for block, row in enumerate(features):
            label = labels[min(block * classify.BLOCK + classify.BLOCK // 2, length - 1)]
            if label >= 0:
                rows.append(row)
                targets.append(1.0 if label > 0 else 0.0)
    return np.array(rows, dtype=np.float64), np.array(targets, dtype=np.float64)


def fit_logistic(x: Matrix, y: Matrix) -> tuple[float, list[float]]:
    """Ridge-penalized logistic regression by Newton's method: (intercept, weights)."""
    design = np.hstack([np.ones((len(x), 1)), x])
    penalty = RIDGE * np.eye(design.shape[1])
    penalty[0, 0] = 0.0
    beta = np.zeros(design.shape[1])
    for _ in range(ITERATIONS):
        p = 1.0 / (1.0 + np.exp(-(design @ beta)))
        gradient = design.T @ (p - y) + penalty @ beta
        hessian = (design.T * (p * (1.0 - p))) @ design + penalty
        beta = beta - np.linalg.solve(hessian, gradient)
    return float(beta[0]), [float(b) for b in beta[1:]]


def model_json(intercept: float, weights: list[float], features: tuple[str, ...]) -> str:
    """The text of ``model.json``: feature names, rounded intercept and weights."""
    model = {
        "features": list(features),
        "intercept": round(intercept, 6),
        "weights": [round(w, 6) for w in weights],
    }
    return json.dumps(model, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``train.py DATA_DIR [--out PATH]``: fit and write the model (default beside this file)."""
    parser = argparse.ArgumentParser(description="Fit the physionet2018 baseline model.")
    parser.add_argument("data_dir", type=Path, help="folder with RECORDS, .hea, .mat, -arousal.mat")
    parser.add_argument("--out", type=Path, default=HERE / "model.json")
    args = parser.parse_args(argv)
    x, y = training_set(args.data_dir)
    intercept, weights = fit_logistic(x, y)
    args.out.write_text(model_json(intercept, weights, load_classify().FEATURES))
    print(f"{args.out}: fitted on {len(y)} blocks, {int(y.sum())} positive", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
