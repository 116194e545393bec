"""Write the bundled autowsl data (``python -m proctor.challenges.autowsl.generate [DEST]``).

Every dataset follows the AutoWSL 2019 layout::

    NAME/info.json        task (pu | ssl | noisy), time_budget, pred_time_budget, schema
    NAME/train.data       tab-separated, header line; num, cat, multi-cat, time columns
    NAME/train.solution   header "label": pu 1/0, ssl 1/0/-1, noisy 1/-1
    NAME/test.data        the same columns
    NAME.solution         (hidden reference) header "label", the test rows' true 0/1

Folders under ``data/``: ``public/`` (the practice dataset, quiz of every task, with its
solution in ``public-reference/``; ``practice/`` holds the same dataset as the practice
phase's exam, since hidden inputs may not lie in the public folder), ``hidden/TASK/TASK/``
(each task's hidden dataset) and ``reference/TASK/TASK.solution``. Seeded: the same files
byte for byte on every run.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from proctor.challenges.autowsl import CHALLENGE_DIR
from proctor.challenges.autowsl.tables import Table, make_table

TIME_BUDGET_S = 120
PRED_TIME_BUDGET_S = 60
PU_LABELED = 0.3  # share of positives labelled 1 in a PU training set
SSL_LABELED = 0.2  # share of rows labelled in a semi-supervised training set
NOISE = 0.15  # share of flipped labels in a noisy training set


@dataclass(frozen=True, slots=True)
class DatasetSpec:
    """One dataset: its name, weak-supervision kind, seed and sizes.

    1500 training rows: the AutoWSL starting kit's semi-supervised baseline self-trains in
    batches of 500 unlabelled rows and never fits a model on fewer (the real datasets had
    thousands of rows).
    """

    name: str
    task: str
    seed: int
    train_rows: int = 1500
    test_rows: int = 500
    positive_rate: float = 0.4


PRACTICE = DatasetSpec("practice", "ssl", 1)
HIDDEN = (
    DatasetSpec("feedback-pu", "pu", 11),
    DatasetSpec("feedback-ssl", "ssl", 12),
    DatasetSpec("feedback-noisy", "noisy", 13),
    DatasetSpec("check-pu", "pu", 21),
    DatasetSpec("check-ssl", "ssl", 22),
    DatasetSpec("check-noisy", "noisy", 23),
    DatasetSpec("final-pu", "pu", 31),
    DatasetSpec("final-ssl", "ssl", 32),
    DatasetSpec("final-noisy", "noisy", 33),
)


def weak_labels(rng: np.random.Generator, truth: np.ndarray, task: str) -> np.ndarray:
    """The training labels participants see, from the true 0/1 labels."""
    if task == "pu":
        return np.where((truth == 1) & (rng.random(truth.size) < PU_LABELED), 1, 0)
    if task == "ssl":
        signed = np.where(truth == 1, 1, -1)
        return np.where(rng.random(truth.size) < SSL_LABELED, signed, 0)
    if task == "noisy":
        signed = np.where(truth == 1, 1, -1)
        return np.where(rng.random(truth.size) < NOISE, -signed, signed)
    raise ValueError(f"unknown weak-supervision task {task!r}: use pu, ssl or noisy")


def _write_table(path: Path, table: Table, rows: slice) -> None:
    names = list(table.columns)
    lines = ["\t".join(names)]
    lines += ["\t".join(table.columns[n][i] for n in names) for i in range(rows.start, rows.stop)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_labels(path: Path, labels: np.ndarray) -> None:
    path.write_text("label\n" + "".join(f"{int(v)}\n" for v in labels), encoding="utf-8")


def write_dataset(spec: DatasetSpec, folder: Path, solution: Path) -> None:
    """Write one dataset into ``folder`` and its hidden test labels to ``solution``."""
    rng = np.random.default_rng(spec.seed)
    table = make_table(rng, spec.train_rows + spec.test_rows, spec.positive_rate)
    train, test = slice(0, spec.train_rows), slice(spec.train_rows, len(table.labels))
    folder.mkdir(parents=True, exist_ok=True)
    info = {
        "task": spec.task,
        "time_budget": TIME_BUDGET_S,
        "pred_time_budget": PRED_TIME_BUDGET_S,
        "schema": table.schema,
    }
    (folder / "info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    _write_table(folder / "train.data", table, train)
    _write_labels(folder / "train.solution", weak_labels(rng, table.labels[train], spec.task))
    _write_table(folder / "test.data", table, test)
    solution.parent.mkdir(parents=True, exist_ok=True)
    _write_labels(solution, table.labels[test])


def generate(dest: Path) -> None:
    """Write every bundled dataset under ``dest`` (the challenge's ``data/`` folder)."""
    solution = dest / "public-reference" / f"{PRACTICE.name}.solution"
    write_dataset(PRACTICE, dest / "public" / PRACTICE.name, solution)
    write_dataset(PRACTICE, dest / "practice" / PRACTICE.name, solution)
    for spec in HIDDEN:
        write_dataset(
            spec,
            dest / "hidden" / spec.name / spec.name,
            dest / "reference" / spec.name / f"{spec.name}.solution",
        )


def main(argv: list[str]) -> int:
    """Write the data to ``argv[0]`` (default: the challenge's own ``data/``)."""
    generate(Path(argv[0]) if argv else CHALLENGE_DIR / "data")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
