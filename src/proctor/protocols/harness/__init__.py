"""Files shipped read-only into the sandbox (run there by the environment's ``python3``).

Nothing here is imported by Proctor itself: :data:`HARNESS_DIR` is mounted into a run, and
``model_harness.py`` runs inside it with the environment's interpreter.
"""

from __future__ import annotations

from pathlib import Path

HARNESS_DIR = Path(__file__).resolve().parent
HARNESS_FILE = "model_harness.py"
