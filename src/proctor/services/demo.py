"""Which entries the demo runs: every bundled challenge's baseline."""

from __future__ import annotations

from pathlib import Path

from proctor.challenges import bundled_names, bundled_root
from proctor.services.catalog import BASELINE_FOLDER


def demo_entries() -> list[tuple[str, Path]]:
    """(challenge name, baseline entry folder) for each bundled challenge with a baseline."""
    out = []
    for name in bundled_names():
        baseline = bundled_root() / name / BASELINE_FOLDER
        if baseline.is_dir():
            out.append((name, baseline))
    return out
