"""A tiny python_model challenge in a temporary folder, for protocol tests in the sandbox.

Datasets come from the bundled autowsl generator (small tables, seeded); every budget is a
few seconds so over-budget runs end fast. Entries (``model.py``) are written per test.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from proctor.challenges import bundled_root
from proctor.challenges.autowsl.generate import DatasetSpec, write_dataset

BUDGET_S = 3.0
ENVIRONMENT = bundled_root() / "environment"
HIDDEN = ("a", "b")

GOOD_MODEL = """
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
        return X["n_1"].fillna(0.0)
"""


def _dataset(folder: Path, solution: Path, seed: int, **info: object) -> None:
    write_dataset(DatasetSpec(folder.name, "noisy", seed, 60, 30), folder, solution)
    path = folder / "info.json"
    data = json.loads(path.read_text())
    data.update({"time_budget": BUDGET_S, "pred_time_budget": BUDGET_S, **info})
    path.write_text(json.dumps(data))


def make_challenge(root: Path, *, slow: str | None = None) -> Path:
    """The challenge: quiz on ``practice``, tasks ``a`` and ``b``; ``slow`` marks one dataset.

    A dataset marked slow has ``"slow": true`` in its ``info.json`` (entries may read it).
    """
    _dataset(root / "public" / "practice", root / "public-ref" / "practice.solution", 1)
    tasks = []
    for seed, name in enumerate(HIDDEN, start=2):
        extra = {"slow": True} if name == slow else {}
        _dataset(root / "hidden" / name / name, root / "refs" / name / f"{name}.solution", seed,
                 **extra)  # fmt: skip
        tasks.append(
            {
                "name": name,
                "public_inputs": "public",
                "hidden_inputs": f"hidden/{name}",
                "hidden_references": f"refs/{name}",
                "scorer": "autowsl",
            }
        )
    spec = {
        "name": "toy-autowsl",
        "title": "toy python_model challenge",
        "protocol": {"kind": "python_model", "load_s": 60, "prep_s": 30, "stage_s": 120},
        "tasks": tasks,
        "environment": {
            "name": "proctor-reference",
            "debian": {"suite": "bookworm", "packages": ["python3", "gcc"]},
            "python": {
                "requirements": str(ENVIRONMENT / "requirements.in"),
                "lock": str(ENVIRONMENT / "requirements.lock"),
            },
            "lock": str(ENVIRONMENT / "environment.lock"),
        },
        "disclosure": {"exam": "errors"},
        "leaderboard": {"metric": "auc"},
        "phases": [{"name": "final", "tasks": list(HIDDEN)}],
    }
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return root


def make_entry(root: Path, model: str) -> Path:
    """An entry folder holding ``model.py``."""
    root.mkdir(parents=True)
    (root / "model.py").write_text(model)
    return root
