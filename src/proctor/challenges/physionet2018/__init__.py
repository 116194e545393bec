"""The bundled ``physionet2018`` reference challenge: synthetic polysomnography, arousal task.

The folder holds ``challenge.yaml``, the committed ``data/`` (written by ``generate.py``, labels
by the rules in ``labels.py``), the participant README ``KIT.md`` and the baseline entry
``baseline/`` (a ``records``-protocol entry: ``setup.sh``, ``next.sh``, ``classify.py``).
"""

from __future__ import annotations

from pathlib import Path

CHALLENGE_DIR = Path(__file__).parent
"""This challenge's folder (the one holding ``challenge.yaml``)."""
BASELINE_DIR = CHALLENGE_DIR / "baseline"
"""The baseline entry's folder; the folder itself is the entry."""
