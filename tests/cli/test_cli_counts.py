"""Counts print as whole numbers: ``rows=6``, never ``6.000000`` or ``6.0``.

Which metrics count is the scorer's declaration (``MetricDeclaration.count``). A tabular
predictions challenge (``rows``: a count) is served, a submission scored through the real
executor, and the organizer's ``submissions`` (text, CSV, JSON), ``status`` and ``leaderboard``
commands run as ``proctor`` subprocesses.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from service_seed import Seeded, run_queued, seed, served
from table_challenge import TEST, make_table_challenge

from proctor.resolve import load_challenge
from proctor.sandbox.base import Sandbox
from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import authenticate
from proctor.settings import Settings

PROCTOR = str(Path(sys.executable).with_name("proctor"))
CSV = ("id,target\n" + "".join(f"{k},{v}\n" for k, v in TEST.items())).encode()
ROWS = len(TEST)


@pytest.fixture
def scored(
    tmp_path: Path, sandbox: Sandbox, sandbox_settings: Settings
) -> Iterator[tuple[Seeded, str, str]]:
    seeded = seed(tmp_path / "service")
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    installs.install(seeded.platform, olga, str(make_table_challenge(tmp_path / "tabular")))
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    receipt = submissions.submit(
        seeded.platform, alice, "tabular", None, io.BytesIO(CSV), "submission.csv"
    )
    run_queued(seeded, sandbox, sandbox_settings)
    with served(seeded.app) as url:
        yield seeded, url, receipt.submission
    seeded.platform.close()


def _proctor(seeded: Seeded, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PROCTOR_SERVER=url, PROCTOR_TOKEN=seeded.tokens["olga"])
    done = subprocess.run([PROCTOR, *args], env=env, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def test_the_table_scorer_declares_rows_a_count(tmp_path: Path) -> None:
    challenge = load_challenge(make_table_challenge(tmp_path / "tabular"))
    declaration = challenge.task("main").scorer_declaration
    assert declaration.count_metrics == {"rows"}
    assert not declaration.metric("f1_macro").count


def test_submissions_and_status_print_counts_whole(scored: tuple[Seeded, str, str]) -> None:
    seeded, url, sid = scored
    text = _proctor(seeded, url, "submissions", "tabular")
    assert f"main.rows={ROWS}" in text.stdout and f"rows={ROWS}." not in text.stdout
    assert text.stdout.endswith("\n")  # the count line on stderr never runs into the last row
    table = _proctor(seeded, url, "submissions", "tabular", "--csv").stdout
    (row,) = csv.DictReader(io.StringIO(table))
    assert row["main.rows"] == str(ROWS)
    listed = json.loads(_proctor(seeded, url, "submissions", "tabular", "--json").stdout)
    rows = listed["submissions"][0]["scores"]["main"]["rows"]
    assert rows == ROWS and isinstance(rows, int)  # JSON keeps it a number
    status = _proctor(seeded, url, "status", sid).stdout
    assert f"rows={ROWS}" in status and f"rows={ROWS}." not in status
    board = _proctor(seeded, url, "leaderboard", "tabular").stdout
    assert board.splitlines()[1].split()[:2] == ["1", "amber"]  # a rank is whole too
