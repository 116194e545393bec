"""The service end to end: a real `proctor serve` on 127.0.0.1, the real sandbox, the CLI.

Users are added, the physionet2018 baseline is submitted and scored, the leaderboard shows it;
the server killed mid-queue loses nothing; phase rules and uploads refuse with clear messages;
no route shows another team's results or a hidden stage's logs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_service import Service, archive
from route_walk import Target, walk

from proctor.challenges import bundled_root

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
BASELINE = bundled_root() / "physionet2018" / "baseline"


def _challenge_copy(tmp: Path, phases: str) -> Path:
    """physionet2018 (with its shared environment files beside it) under new phases."""
    root = tmp / "bundles"
    shutil.copytree(bundled_root() / "physionet2018", root / "physionet2018",
                    ignore=shutil.ignore_patterns("baseline", "__pycache__"))  # fmt: skip
    shutil.copytree(bundled_root() / "environment", root / "environment")
    yaml = root / "physionet2018" / "challenge.yaml"
    text = yaml.read_text()
    yaml.write_text(text[: text.index("phases:")] + phases)
    return root / "physionet2018"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    env = dict(os.environ, PROCTOR_DATA=str(tmp_path / "data"), PROCTOR_LEASE_S="2",
               PROCTOR_HEARTBEAT_S="0.5", PROCTOR_REAPER_S="0.5",
               PROCTOR_UPLOAD_BYTES="1000000")  # fmt: skip
    env.pop("PROCTOR_DATABASE_URL", None)
    env.pop("PROCTOR_TOKEN", None)
    svc = Service(tmp_path / "data", env)
    for name, extra in (("olga", ["--organizer"]), ("bob", ["--team", "blue"]),
                        ("carol", ["--team", "red"])):  # fmt: skip
        added = svc.cli("user", "add", name, *extra, "--json")
        assert added.returncode == 0, added.stderr
        svc.tokens[name] = json.loads(added.stdout)["token"]
    svc.start()
    installed = svc.cli("challenge", "add", "physionet2018", "--json", user="olga")
    assert installed.returncode == 0, installed.stderr
    yield svc
    svc.stop()


def test_the_baseline_is_submitted_scored_and_ranked_and_private_to_its_team(
    service: Service, tmp_path: Path
) -> None:
    entry = archive(BASELINE, tmp_path / "baseline.tar.gz")
    done = service.cli("submit", str(entry), "--challenge", "physionet2018", "--json",
                       user="bob")  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "scored" and report["team"] == "blue"
    assert report["scores"]["arousal"]["auprc"] > 0.5
    sid = report["submission"]
    board = service.cli("leaderboard", "physionet2018", "--json")
    rows = json.loads(board.stdout)["rows"]
    assert [(r["rank"], r["team"], r["submission"]) for r in rows] == [(1, "blue", sid)]
    assert rows[0]["scores"]["arousal"]["auprc"] == report["scores"]["arousal"]["auprc"]
    other = service.cli("status", sid, "--json", user="carol")
    assert other.returncode == 5
    assert json.loads(other.stdout)["error"]["kind"] == "not_found"
    mine = json.loads(service.cli("status", sid, "--json", user="bob").stdout)
    assert mine["status"] == "scored" and mine["failure"] is None
    assert mine["report"]["stages"][2]["message"].startswith("exam: 8 cases")
    _walk_routes(service, sid)


def _walk_routes(service: Service, sid: str) -> None:
    """Every route of the schema, as each role: no other team's report, no hidden data."""
    references = ["test-reference", "cases.jsonl", "-arousal.mat"]
    bobs = ["setup.sh completed", "records matched"]
    forbidden = {
        "anonymous": references + bobs,
        "other": references + bobs,
        "member": references,
        "organizer": references,
    }
    users = {"anonymous": None, "other": "carol", "member": "bob", "organizer": "olga"}
    clients = {role: service.http(user) for role, user in users.items()}
    try:
        walk(clients, Target("physionet2018", sid, "arousal", forbidden))
    finally:
        for client in clients.values():
            client.close()


@pytest.mark.very_slow  # a minute or more of a slow machine's CI: `make test-slow`
def test_a_server_killed_mid_queue_loses_nothing(service: Service, tmp_path: Path) -> None:
    entry = archive(BASELINE, tmp_path / "baseline.tar.gz")
    sids = []
    for _ in range(3):
        queued = service.cli("submit", str(entry), "-c", "physionet2018", "--no-wait", "--json",
                             user="bob")  # fmt: skip
        assert queued.returncode == 0, queued.stderr
        receipt = json.loads(queued.stdout)
        assert receipt["status"] == "queued" and receipt["team"] == "blue"
        sids.append(receipt["submission"])
    time.sleep(1.5)
    service.stop(signal.SIGKILL)
    service.start()
    deadline = time.time() + 200
    states: dict[str, str] = {}
    while time.time() < deadline:
        states = {
            sid: json.loads(service.cli("status", sid, "--json", user="bob").stdout)["status"]
            for sid in sids
        }
        if all(state not in ("queued", "running") for state in states.values()):
            break
        time.sleep(1)
    assert states == dict.fromkeys(sids, "scored")
    rows = json.loads(service.cli("leaderboard", "physionet2018", "--board", "all", "--json",
                                  user="olga").stdout)["rows"]  # fmt: skip  # all: organizers
    assert sorted(r["submission"] for r in rows) == sorted(sids)


PHASES = """phases:
  - name: early
    tasks: [arousal]
    closes: 2020-01-01T00:00:00+00:00
  - name: weekly
    tasks: [arousal]
    quota: {every_days: 7}
"""


@pytest.mark.very_slow  # a minute or more of a slow machine's CI: `make test-slow`
def test_phase_rules_and_uploads_refuse_with_clear_messages(
    service: Service, tmp_path: Path
) -> None:
    bundle = _challenge_copy(tmp_path, PHASES)
    added = service.cli("challenge", "add", str(bundle), "--json", user="olga")
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["version"] == 2
    entry = archive(BASELINE, tmp_path / "baseline.tar.gz")
    closed = service.cli("submit", str(entry), "-c", "physionet2018", "--phase", "early",
                         "--json", user="bob")  # fmt: skip
    assert closed.returncode == 4
    assert "closed at 2020-01-01T00:00:00+00:00" in json.loads(closed.stdout)["error"]["message"]
    first = service.cli("submit", str(entry), "-c", "physionet2018", "--no-wait", "--json",
                        user="bob")  # fmt: skip
    assert first.returncode == 0, first.stdout
    assert json.loads(first.stdout)["phase"] == "weekly"
    again = service.cli("submit", str(entry), "-c", "physionet2018", "--no-wait", "--json",
                        user="bob")  # fmt: skip
    assert again.returncode == 4
    message = json.loads(again.stdout)["error"]["message"]
    assert re.search(r"one submission every 7 days: .* next is allowed at \d{4}-", message)
    not_archive = tmp_path / "notes.zip"
    not_archive.write_text("not an archive\n")
    refused = service.cli("submit", str(not_archive), "-c", "physionet2018", "--json",
                          user="carol")  # fmt: skip
    assert refused.returncode == 1
    assert "notes.zip is not a zip, tar.gz or tar archive" in refused.stdout
    other_team = service.cli("submit", str(entry), "-c", "physionet2018", "--no-wait",
                             "--json", user="carol")  # fmt: skip
    assert other_team.returncode == 0
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(1_500_000))
    with service.http("carol") as client, big.open("rb") as stream:
        answer = client.post("/api/v1/challenges/physionet2018/submissions",
                             files={"entry": ("big.tar", stream)})  # fmt: skip
    assert answer.status_code == 413
    assert "larger than 1000000 bytes" in answer.json()["error"]["message"]
