"""AutoWSL baseline: hand-made features of every column type and a logistic regression.

``Model(info)`` learns from the weak labels as the dataset's task allows:
- ``pu`` (1 labelled positive, 0 unlabelled): positives against everything unlabelled, which
  ranks rows as the true classes would (the PU ranking argument);
- ``ssl`` (1, -1 labelled, 0 unlabelled): the labelled rows only;
- ``noisy`` (1, -1, some flipped): every row; a regularised linear model shrugs off the noise.
Deterministic: no random state is drawn anywhere.
"""

from __future__ import annotations

import os
import pickle
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

TOP_LEVELS = 24


class Features:
    """Turns a raw AutoWSL table into a numeric matrix (fitted on the training table)."""

    def __init__(self, schema: dict[str, str]) -> None:
        self.schema = schema
        self.medians: dict[str, float] = {}
        self.levels: dict[str, list[str]] = {}
        self.mean: Any = None
        self.scale: Any = None

    def fit(self, X: Any) -> Features:
        for name, kind in self.schema.items():
            column = X[name]
            if kind == "num":
                median = column.median()
                self.medians[name] = 0.0 if np.isnan(median) else float(median)
            elif kind in ("cat", "multi-cat"):
                counts = self._tokens(column, kind).value_counts()
                self.levels[name] = list(counts.index[:TOP_LEVELS])
        raw = self._raw(X)
        self.mean = raw.mean(axis=0)
        self.scale = raw.std(axis=0) + 1e-9
        return self

    @staticmethod
    def _tokens(column: Any, kind: str) -> Any:
        filled = column.fillna("")
        if kind == "cat":
            return filled
        return filled.str.split(",").explode()

    def _raw(self, X: Any) -> Any:
        parts = []
        for name, kind in self.schema.items():
            column = X[name]
            if kind == "num":
                values = column.to_numpy(dtype=float)
                parts.append(np.isnan(values).astype(float))
                parts.append(np.where(np.isnan(values), self.medians[name], values))
            elif kind == "cat":
                for level in self.levels[name]:
                    parts.append((column.fillna("") == level).to_numpy(dtype=float))
            elif kind == "multi-cat":
                sets = column.fillna("").str.split(",")
                for level in self.levels[name]:
                    parts.append(sets.map(lambda tokens, lv=level: lv in tokens).to_numpy(float))
            elif kind == "time":
                hours = column.dt.hour.fillna(0).to_numpy(dtype=float)
                parts.append(np.sin(hours / 24 * 2 * np.pi))
                parts.append(np.cos(hours / 24 * 2 * np.pi))
                parts.append(column.dt.dayofweek.fillna(0).to_numpy(dtype=float) / 6)
        return np.column_stack(parts)

    def transform(self, X: Any) -> Any:
        return (self._raw(X) - self.mean) / self.scale


class Model:
    """The AutoWSL entry interface: train, save, load, predict."""

    def __init__(self, info: dict[str, Any]) -> None:
        self.info = info
        self.features: Any = None
        self.classifier: Any = None

    def train(self, X: Any, y: Any) -> None:
        task = self.info["task"]
        labels = y.to_numpy()
        if task == "ssl":
            keep = labels != 0
            X, labels = X[keep], labels[keep]
        self.features = Features(self.info["schema"]).fit(X)
        self.classifier = LogisticRegression(C=0.5, max_iter=2000)
        self.classifier.fit(self.features.transform(X), (labels > 0).astype(int))

    def save(self, directory: str) -> None:
        with open(os.path.join(directory, "model.pkl"), "wb") as handle:
            pickle.dump((self.features, self.classifier), handle)

    def load(self, directory: str) -> None:
        with open(os.path.join(directory, "model.pkl"), "rb") as handle:
            self.features, self.classifier = pickle.load(handle)  # noqa: S301 - its own file

    def predict(self, X: Any) -> Any:
        return self.classifier.predict_proba(self.features.transform(X))[:, 1]
