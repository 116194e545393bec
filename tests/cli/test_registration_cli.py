"""``proctor register``, ``registrations``, ``team create`` and ``team leave`` as real processes.

Each runs with ``--json`` (or ``--csv``) against a served platform whose toy challenge asks
for approval; the refusals exit with the service's status (2 usage, 4 refused, 5 forbidden).
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
from registration_fixtures import registered_toy
from service_seed import Seeded, seed, served

from proctor.services.platform.accounts import add_user

PROCTOR = str(Path(sys.executable).with_name("proctor"))


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Seeded, str]]:
    seeded = seed(tmp_path / "service")
    seeded.tokens["dan"] = add_user(seeded.platform, "dan").token
    registered_toy(seeded, tmp_path / "v2", mode="approval")
    with served(seeded.app) as url:
        yield seeded, url
    seeded.platform.close()


def proctor(site: tuple[Seeded, str], user: str, *args: str) -> subprocess.CompletedProcess[str]:
    seeded, url = site
    env = dict(os.environ, PROCTOR_SERVER=url, PROCTOR_TOKEN=seeded.tokens[user])
    return subprocess.run(
        [PROCTOR, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_a_participant_registers_and_an_organizer_approves_from_the_command_line(
    site: tuple[Seeded, str],
) -> None:
    unaccepted = proctor(site, "dan", "register", "toy")
    assert unaccepted.returncode == 2
    assert (
        "--accept-terms" in unaccepted.stderr and "/challenges/toy/pages/terms" in unaccepted.stderr
    )
    done = proctor(site, "dan", "register", "toy", "--accept-terms", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["state"] == "pending"
    listed = proctor(site, "olga", "registrations", "toy", "--approve", "dan", "--json")
    assert listed.returncode == 0, listed.stderr
    answer = json.loads(listed.stdout)
    assert answer["pending"] == 0 and answer["registrations"][0]["state"] == "approved"
    table = proctor(site, "olga", "registrations", "toy", "--csv")
    rows = list(csv.DictReader(io.StringIO(table.stdout)))
    assert [(row["name"], row["state"]) for row in rows] == [("dan", "approved")]
    assert proctor(site, "alice", "registrations", "toy").returncode == 5  # not found


def test_a_participant_creates_and_leaves_a_team_from_the_command_line(
    site: tuple[Seeded, str],
) -> None:
    made = proctor(site, "dan", "team", "create", "dragons", "--json")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout) == {"user": "dan", "team": "dragons"}
    left = proctor(site, "dan", "team", "leave")
    assert (left.returncode, left.stdout.strip()) == (0, "dan left team dragons")
    again = proctor(site, "dan", "team", "leave")
    assert again.returncode == 2 and "in no team" in again.stderr
