"""Install a test plug-in the way a distribution does: a ``.dist-info`` declaring entry points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from paths import SUPPORT

PROCTOR = Path(sys.executable).parent / "proctor"
TESTS = SUPPORT


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


def run_with_plugin(site: Path, entry: Path, challenge: Path, work_root: Path) -> dict[str, Any]:
    """``proctor run --json`` in a new process that finds the plug-in installed in ``site``.

    The process sees ``site`` and the tests' folder on its path; its JSON report is returned
    after a successful run (a failed one fails the test with the command's stderr).
    """
    path = os.pathsep.join([str(site), str(TESTS), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "PROCTOR_WORK_ROOT": str(work_root)}
    done = subprocess.run(
        [str(PROCTOR), "run", str(entry), "--challenge", str(challenge), "--json"],
        capture_output=True, text=True, env=env, timeout=280, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report
