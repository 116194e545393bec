"""The bundled ``autowsl`` reference challenge: weakly supervised binary classification.

The folder holds ``challenge.yaml``, the committed ``data/`` (written by ``generate.py``: PU,
semi-supervised and noisy-label datasets in the AutoWSL 2019 layout), the participant README
``KIT.md`` and the baseline entry ``baseline/`` (a ``python_model`` entry: ``model.py``).
"""

from __future__ import annotations

from pathlib import Path

CHALLENGE_DIR = Path(__file__).parent
"""This challenge's folder (the one holding ``challenge.yaml``)."""
BASELINE_DIR = CHALLENGE_DIR / "baseline"
"""The baseline entry's folder; the folder itself is the entry."""
