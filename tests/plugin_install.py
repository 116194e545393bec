"""Install a test plug-in the way a distribution does: a ``.dist-info`` declaring entry points."""

from __future__ import annotations

from pathlib import Path

import pytest


def install_plugin(site: Path, monkeypatch: pytest.MonkeyPatch, group: str, *entries: str) -> None:
    """Put on ``sys.path`` a distribution declaring ``entries`` (``NAME = MODULE:OBJECT``).

    The entry points belong to ``group`` (``proctor.protocols``, ``proctor.scorers``,
    ``proctor.table_metrics``); the modules they name are found on the tests' own path.
    """
    name = group.replace(".", "_")
    info = site / f"{name}_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}-plugin\nVersion: 1.0\n")
    lines = "\n".join(entries)
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}\n")
    monkeypatch.syspath_prepend(str(site))
