"""A tiny Kaggle-style predictions challenge scored by ``scorer: {table: ...}``, for tests.

Three classes; the dev split's answers are public (its inputs folder holds ``solution.csv``),
the test split's are hidden. :func:`write_prediction` writes an upload in the protocol's
layout (``dev/main/submission.csv``, ``test/main/submission.csv``).
"""

from __future__ import annotations

from pathlib import Path

import yaml

DEV = {"d1": "cat", "d2": "dog", "d3": "bird", "d4": "cat"}
TEST = {"t1": "cat", "t2": "dog", "t3": "bird", "t4": "cat", "t5": "dog", "t6": "cat"}
SECRET = "HIDDEN-SOLUTION-5521"


def _csv(rows: dict[str, str], header: str = "id,target") -> str:
    return header + "\n" + "".join(f"{key},{value}\n" for key, value in rows.items())


def make_table_challenge(root: Path, *, metric: str = "f1_macro") -> Path:
    """Write the challenge under ``root`` and return its folder."""
    for split, rows in (("dev", DEV), ("test", TEST)):
        inputs = root / "data" / split / "main"
        inputs.mkdir(parents=True)
        (inputs / "test.csv").write_text("id,x\n" + "".join(f"{key},1\n" for key in rows))
    (root / "data" / "dev" / "main" / "solution.csv").write_text(_csv(DEV))
    hidden = root / "data" / "test-reference" / "main"
    hidden.mkdir(parents=True)
    (hidden / "solution.csv").write_text(_csv(TEST))
    (hidden / "NOTE.txt").write_text(SECRET)
    spec = {
        "name": "tabular",
        "title": "A tabular predictions challenge",
        "protocol": {"kind": "predictions", "file_patterns": ["submission.csv"]},
        "tasks": [
            {
                "name": "main",
                "public_inputs": "data/dev/main",
                "hidden_inputs": "data/test/main",
                "hidden_references": "data/test-reference",
                "scorer": {"table": {"metric": metric}},
            }
        ],
        "leaderboard": {"metric": metric},
        "phases": [{"name": "final", "tasks": ["main"]}],
    }
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return root


def write_prediction(entry: Path, dev: dict[str, str], test: dict[str, str]) -> Path:
    """An upload whose dev and test predictions are ``dev`` and ``test`` (id → label)."""
    for split, rows in (("dev", dev), ("test", test)):
        folder = entry / split / "main"
        folder.mkdir(parents=True)
        (folder / "submission.csv").write_text(_csv(rows))
    return entry
