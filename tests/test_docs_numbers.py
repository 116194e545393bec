"""The scores the docs quote are the scores ``make demo`` prints: docs that cannot go stale.

``docs/bundled-challenges.md`` quotes each bundled challenge's baseline and trivial scores in
its table. This runs ``proctor demo --json`` (every bundled challenge's baseline and trivial
entry in the real sandbox) and checks each number the table quotes against the demo's reports,
at the digits the table shows. A changed challenge, scorer or baseline fails here until the
table says what the demo prints.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from paths import REPO

from proctor.challenges import bundled_names

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.environment,
    pytest.mark.slow,  # about a minute with the environments built: run by make test
    pytest.mark.timeout(3600),
]

PROCTOR = str(Path(sys.executable).with_name("proctor"))
TABLE_ROW = re.compile(r"^\| `([a-z0-9-]+)` \| `[a-z_]+` \| [^|]* \| ([^|]*) \| ([^|]*) \|$", re.M)
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d{2,}")
"""A score as the table quotes it (``0.8249``); ``0.5``, a constant entry's answer, is none."""


def _quoted() -> dict[str, dict[str, list[str]]]:
    """Challenge → entry (baseline, trivial) → the decimal numbers its table cell quotes."""
    text = (REPO / "docs" / "bundled-challenges.md").read_text(encoding="utf-8")
    return {
        name: {"baseline": DECIMAL.findall(base), "trivial": DECIMAL.findall(trivial)}
        for name, base, trivial in TABLE_ROW.findall(text)
    }


def _figures(report: dict[str, Any]) -> list[float]:
    """Every score of every task of a report (interval bounds included)."""
    return [
        float(value)
        for row in report["scores"].values()
        for value in row.values()
        if isinstance(value, int | float)
    ]


def _matches(quoted: str, figures: list[float]) -> bool:
    digits = len(quoted.split(".")[1])
    return any(math.isclose(round(v, digits), float(quoted), abs_tol=1e-12) for v in figures)


def test_the_table_quotes_what_the_demo_prints(shared_dir: Path) -> None:
    quoted = _quoted()
    assert set(quoted) == set(bundled_names()), "the table lists other challenges than are bundled"
    env = dict(os.environ, PROCTOR_WORK_ROOT=str(shared_dir))
    done = subprocess.run([PROCTOR, "demo", "--json"], capture_output=True, text=True, env=env,
                          timeout=3600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    printed = {c["challenge"]: c for c in json.loads(done.stdout)["challenges"]}
    stale = []
    for challenge, entries in quoted.items():
        # the demo labels its trivial entry by the folder's name (constant-0.5, empty...)
        reports = {
            "baseline" if e["entry"] == "baseline" else "trivial": e["report"]
            for e in printed[challenge]["entries"]
        }
        for entry, numbers in entries.items():
            figures = _figures(reports[entry])
            stale += [f"{challenge} {entry}: {n}" for n in numbers if not _matches(n, figures)]
    assert not stale, f"docs/bundled-challenges.md quotes what the demo no longer prints: {stale}"
