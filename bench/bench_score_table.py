"""Benchmark: ``proctor score table`` (the in-process use case) against pandas + scikit-learn.

Writes a solution and a prediction CSV of ROWS rows (``id,target``; ids ``r0000001``..., the
prediction in the solution's order as a sample submission gives it, values written as pandas
writes them: full ``repr`` precision) for each metric, then times, best of REPEAT (the two
taken in turn, so a burst of load on the shared machine hits both):

(a) proctor: ``proctor.services.local.table.score_table_files`` (read, match ids, compute);
(b) the peer: ``pandas.read_csv`` of both files, ``merge`` on the id (one-to-one) and the
    ``sklearn.metrics`` function on the matched columns.

Both must give the same value (to 1e-12). Clean files like these take the ``pyarrow.csv`` fast
path of :mod:`proctor.formats.table_arrow` (docs/architecture.md, "score table"). Prints rows
per second and the ratio (a)/(b) for accuracy, roc_auc, rmse and log_loss; the issue's goal is
a ratio of at least 3.

Usage: ``.venv/bin/python bench/bench_score_table.py [--rows 1000000] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import pandas as pd
import sklearn.metrics as skm

from proctor.services.local.table import score_table_files

GOAL = 3.0
PEERS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "accuracy": skm.accuracy_score,
    "roc_auc": skm.roc_auc_score,
    "rmse": skm.root_mean_squared_error,
    "log_loss": skm.log_loss,
}


def write_files(
    folder: Path, metric: str, rows: int, rng: np.random.Generator
) -> tuple[Path, Path]:
    """The solution and prediction of ``metric``, written with pandas (as organizers do)."""
    ids = np.char.add("r", np.char.zfill(np.arange(rows).astype(str), 7))
    if metric == "rmse":
        truth = rng.normal(50, 10, rows)
        pred = truth + rng.normal(0, 3, rows)
    else:
        truth = rng.integers(0, 2, rows)
        noisy = np.clip(truth * 0.4 + rng.random(rows) * 0.6, 0, 1)
        pred = (noisy > 0.5).astype(int) if metric == "accuracy" else noisy
    solution, prediction = folder / f"{metric}-solution.csv", folder / f"{metric}-pred.csv"
    pd.DataFrame({"id": ids, "target": truth}).to_csv(solution, index=False)
    pd.DataFrame({"id": ids, "target": pred}).to_csv(prediction, index=False)
    return solution, prediction


def ours(metric: str, solution: Path, prediction: Path) -> float:
    return score_table_files(solution, prediction, metric).value


def peer(metric: str, solution: Path, prediction: Path) -> float:
    truth = pd.read_csv(solution)
    pred = pd.read_csv(prediction)
    matched = truth.merge(pred, on="id", suffixes=("", "_pred"), validate="one_to_one")
    return float(PEERS[metric](matched["target"].to_numpy(), matched["target_pred"].to_numpy()))


def best(
    calls: tuple[Callable[[str, Path, Path], float], ...],
    files: tuple[str, Path, Path],
    repeat: int,
) -> list[tuple[float, float]]:
    """For each call, its best time of ``repeat`` and its value; the calls alternate."""
    times: list[list[float]] = [[] for _ in calls]
    values = [float("nan")] * len(calls)
    for _ in range(repeat):
        for index, call in enumerate(calls):
            start = time.perf_counter()
            values[index] = call(*files)
            times[index].append(time.perf_counter() - start)
    return [(min(spent), value) for spent, value in zip(times, values, strict=True)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(2027)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for metric in PEERS:
            solution, prediction = write_files(Path(tmp), metric, args.rows, rng)
            files = (metric, solution, prediction)
            (our_s, our_value), (peer_s, peer_value) = best((ours, peer), files, args.repeat)
            same = abs(our_value - peer_value) <= 1e-12 * max(1.0, abs(peer_value))
            ratio = peer_s / our_s
            ok &= same and ratio >= GOAL
            print(
                f"{metric:9s} proctor {args.rows / our_s / 1e6:6.2f} M rows/s ({our_s:.3f} s)  "
                f"pandas+sklearn {args.rows / peer_s / 1e6:6.2f} M rows/s ({peer_s:.3f} s)  "
                f"ratio {ratio:5.2f}x  same value: {same}"
            )
    print(f"goal: >= {GOAL:.0f}x pandas.read_csv + scikit-learn on every metric: "
          f"{'met' if ok else 'NOT met'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
