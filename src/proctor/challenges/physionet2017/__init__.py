"""The bundled ``physionet2017`` reference challenge: single-lead ECG, AF classification.

The folder holds ``challenge.yaml``, the committed ``data/`` (written by ``generate.py`` from the
rhythms of ``rhythms.py``), the participant README ``KIT.md``, the baseline entry ``baseline/``
(RR-interval features and thresholds learned from the training records) and the trivial entry
``trivial/`` (every record normal).
"""

from __future__ import annotations

from pathlib import Path

CHALLENGE_DIR = Path(__file__).parent
"""This challenge's folder (the one holding ``challenge.yaml``)."""
BASELINE_DIR = CHALLENGE_DIR / "baseline"
"""The baseline entry's folder; the folder itself is the entry."""
TRIVIAL_DIR = CHALLENGE_DIR / "trivial"
"""The trivial entry (answers N for every record)."""
