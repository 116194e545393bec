"""Where the tests' data, the repository and the bundled challenges are."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
DATA = TESTS / "data"
SUPPORT = TESTS / "support"
BUNDLED = REPO / "src" / "proctor" / "challenges"
BUNDLED_ENV = BUNDLED / "environment"
