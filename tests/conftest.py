"""Fixtures shared by every test module.

Under pytest-xdist (``make test`` runs two workers) each worker's evaluations get their own slot
uids (``PROCTOR_SLOT_UID_BASE``, 10,000 apart), as explicit-slot runs do (``sandbox_helpers``).
"""

import os

from sandbox_helpers import EVALUATION_UID_BASE

os.environ.setdefault("PROCTOR_SLOT_UID_BASE", str(EVALUATION_UID_BASE))

pytest_plugins = [
    "sandbox_fixtures",
    "environment_fixtures",
    "db_fixtures",
    "browser_fixtures",
    "signal_fixtures",
    "smtp_fixtures",
    "kit_audit",
]
