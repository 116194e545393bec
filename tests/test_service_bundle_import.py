"""An imported Codabench bundle through a real `proctor serve` (issue 18): `challenge add` of
the imported folder, two teams `submit` the zip they would upload to Codabench, and the board
shows the bundle's columns, ranked by its primary column in its sorting order."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bundle_fixtures import V2_YAML, make_v2_bundle, submission_zip
from proctor.services.local.bundle_import import import_challenge
from test_service_e2e import Service

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
OPEN_NOW = V2_YAML.replace("end: 2021-06-30", "end: 2099-06-30").replace(
    "start: 2021-07-01 00:00:00", "start: 2099-07-01 00:00:00"
)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    env = dict(os.environ, PROCTOR_DATA=str(tmp_path / "data"))
    env.pop("PROCTOR_ALLOW_HOST_ENVIRONMENT", None)
    env.pop("PROCTOR_DATABASE_URL", None)
    env.pop("PROCTOR_TOKEN", None)
    svc = Service(tmp_path / "data", env)
    for name, extra in (("olga", ["--organizer"]), ("bob", ["--team", "blue"]),
                        ("eve", ["--team", "red"])):  # fmt: skip
        added = svc.cli("user", "add", name, *extra, "--json")
        assert added.returncode == 0, added.stderr
        svc.tokens[name] = json.loads(added.stdout)["token"]
    svc.start()
    yield svc
    svc.stop()


def test_an_imported_bundle_is_served_and_ranked_by_its_columns(
    service: Service, tmp_path: Path
) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=OPEN_NOW)
    challenge = tmp_path / "challenge"
    import_challenge(bundle, challenge, "host")
    installed = service.cli("challenge", "add", str(challenge), "--json", user="olga")
    assert installed.returncode == 0, installed.stderr
    accuracy = {}
    for user, predictions in (("bob", "b b b b b b\n"), ("eve", "a b a b a b\n")):
        upload = submission_zip(tmp_path / user, predictions)
        done = service.cli("submit", str(upload), "-c", "toy-labels-challenge", "--json", user=user)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["status"] == "scored", report
        accuracy[user] = report["scores"]["alpha-task"]["accuracy"]
    assert accuracy == {"bob": 0.5, "eve": 1.0}
    board = service.cli(
        "leaderboard", "toy-labels-challenge", "--phase", "development-phase", "--board",
        "results", "--json",
    )  # fmt: skip
    assert board.returncode == 0, board.stderr
    answer = json.loads(board.stdout)
    assert answer["metrics"] == ["accuracy", "error"]  # the hidden column is left out
    assert answer["title"] == "Results"
    assert [(row["rank"], row["team"]) for row in answer["rows"]] == [(1, "red"), (2, "blue")]
