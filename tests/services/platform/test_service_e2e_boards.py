"""The predictions protocol through a real `proctor serve`: the eHealth-KD 2019 baseline.

The baseline is built as `proctor kit` builds it, submitted with the CLI, scored, and seen on
the board as JSON and CSV; the organizer rescores the phase from the stored upload (nothing
changes with the same scorer); a participant cannot read the private `all` board.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_service import Service, archive

from proctor.leaderboard import rows_from_csv
from proctor.services.local.catalog import write_kit

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
TASKS = ("scenario1-main", "scenario2-taskA", "scenario3-taskB")


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    env = dict(os.environ, PROCTOR_DATA=str(tmp_path / "data"), PROCTOR_LEASE_S="2",
               PROCTOR_HEARTBEAT_S="0.5", PROCTOR_REAPER_S="0.5")  # fmt: skip
    env.pop("PROCTOR_DATABASE_URL", None)
    env.pop("PROCTOR_TOKEN", None)
    svc = Service(tmp_path / "data", env)
    for name, extra in (("olga", ["--organizer"]), ("bob", ["--team", "blue"])):
        added = svc.cli("user", "add", name, *extra, "--json")
        assert added.returncode == 0, added.stderr
        svc.tokens[name] = json.loads(added.stdout)["token"]
    svc.start()
    installed = svc.cli("challenge", "add", "ehealthkd2019", "--json", user="olga")
    assert installed.returncode == 0, installed.stderr
    yield svc
    svc.stop()


def _kit_entry(tmp_path: Path) -> Path:
    """The baseline entry as `proctor kit ehealthkd2019` writes it, archived."""
    kit = tmp_path / "kit"
    write_kit("ehealthkd2019", kit)
    return archive(kit / "entry", tmp_path / "baseline.tar.gz")


@pytest.mark.very_slow  # a minute or more of a slow machine's CI: `make test-slow`
def test_the_ehealthkd_baseline_is_scored_by_the_service_and_shown_on_its_board(
    service: Service, tmp_path: Path
) -> None:
    done = service.cli("submit", str(_kit_entry(tmp_path)), "-c", "ehealthkd2019", "--json",
                       user="bob")  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "scored"
    sid = report["submission"]
    board = service.cli("leaderboard", "ehealthkd2019", "--json")
    assert board.returncode == 0, board.stderr
    shown = json.loads(board.stdout)
    assert (shown["challenge"], shown["phase"], shown["board"]) == ("ehealthkd2019", "final",
                                                                    "default")  # fmt: skip
    [row] = shown["rows"]
    assert (row["rank"], row["team"], row["submission"]) == (1, "blue", sid)
    for task in TASKS:
        assert row["scores"][task]["f1"] == report["scores"][task]["f1"]
        assert 0 < row["scores"][task]["f1"] <= 1
    csv = service.cli("leaderboard", "ehealthkd2019", "--csv")
    assert csv.returncode == 0, csv.stderr
    [csv_row] = rows_from_csv(csv.stdout)
    assert csv_row.submission == sid and csv_row.scores == row["scores"]
    private = service.cli("leaderboard", "ehealthkd2019", "--board", "all", "--json", user="bob")
    assert private.returncode == 5
    assert json.loads(private.stdout)["error"]["kind"] == "forbidden"
    with service.http() as anonymous:
        unknown = anonymous.get("/api/v1/challenges/ehealthkd2019/leaderboards/nope")
    assert unknown.status_code == 404 and "default" in unknown.text
    rescored = service.cli("rescore", "ehealthkd2019", "--json", user="olga")
    assert rescored.returncode == 0, rescored.stderr
    answer = json.loads(rescored.stdout)
    assert answer["rescored"] == len(TASKS) and answer["changed"] == 0
    assert answer["rank_changes"] == []
    with service.http("bob") as bob:
        refused = bob.post("/api/v1/challenges/ehealthkd2019/phases/final/rescore")
    assert refused.status_code == 404  # the console's routes are not there for participants
