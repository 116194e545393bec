"""The installed ``proctor`` command run as a participant runs it, in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

PROCTOR = Path(sys.executable).parent / "proctor"


def proctor(*args: str, work_root: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``proctor ARGS`` with its runs under ``work_root``; the outcome, whatever it is."""
    env = {**os.environ, "PROCTOR_WORK_ROOT": str(work_root)}
    return subprocess.run(
        [str(PROCTOR), *args], capture_output=True, text=True, env=env, timeout=timeout, check=False
    )


def run_json(
    entry: Path, challenge: str | Path, work_root: Path, *, timeout: float = 300
) -> dict[str, Any]:
    """``proctor run ENTRY -c CHALLENGE --json`` that must exit 0: its report."""
    done = proctor("run", str(entry), "-c", str(challenge), "--json", work_root=work_root,
                   timeout=timeout)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report
