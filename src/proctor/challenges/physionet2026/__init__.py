"""The bundled ``physionet2026`` reference challenge: cognitive impairment from a night's PSG.

The folder holds ``challenge.yaml``, the committed ``data/`` (written by ``generate.py`` in the
2026 layout: ``demographics.csv`` and EDF files, via ``edf.py``), the challenge's own scripts
(``scripts/``: ``train_model.py``, ``run_model.py``, ``helper_code.py``, which replace an
entry's), the scoring program (``scoring/evaluate_model.py``), the participant README
``KIT.md``, the baseline entry ``baseline/`` (a ``physionet_model`` entry laid out as the
organizers' ``python-example-2026``: ``team_code.py``, ``Dockerfile``, ``requirements.txt``) and
a ``trivial/`` entry (a constant, the leaderboard's floor).
"""

from __future__ import annotations

from pathlib import Path

CHALLENGE_DIR = Path(__file__).parent
"""This challenge's folder (the one holding ``challenge.yaml``)."""
BASELINE_DIR = CHALLENGE_DIR / "baseline"
"""The baseline entry's folder; the folder itself is the entry."""
