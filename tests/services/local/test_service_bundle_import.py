"""An imported Codabench bundle through a real `proctor serve` (issue 18): `challenge add` of
the imported folder, two teams `submit` the zip they would upload to Codabench, and the board
shows the bundle's columns, ranked by its primary column in its sorting order; a column the
scoring program does not write is empty (a dash), its row ranked last."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from bundle_fixtures import SCORE_JSON, V2_YAML, make_v2_bundle, submission_zip
from cli_service import Service

from proctor.resolve import load_challenge
from proctor.services.local.bundle_import import import_challenge

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
    _a_column_the_program_does_not_write_is_empty_and_ranks_last(service, tmp_path / "gaps")


SKIPS_ACCURACY = SCORE_JSON.replace(
    '(output / "scores.json").write_text(json.dumps({"accuracy": accuracy,',
    'written = {} if guess[:3] == ["b", "b", "b"] else {"accuracy": accuracy}\n'
    '(output / "scores.json").write_text(json.dumps({**written,',
)


def _a_column_the_program_does_not_write_is_empty_and_ranks_last(
    service: Service, tmp_path: Path
) -> None:
    """As on Codabench, a column the scoring program leaves out has no value: a dash on the
    board's page, the row ranked after every row with a value of the ranking column."""
    assert SKIPS_ACCURACY != SCORE_JSON
    text = OPEN_NOW.replace("title: Toy Labels Challenge", "title: Toy Gaps Challenge")
    bundle = make_v2_bundle(tmp_path / "bundle", score_py=SKIPS_ACCURACY, yaml_text=text)
    challenge = tmp_path / "challenge"
    import_challenge(bundle, challenge, "host")
    scorer = load_challenge(challenge).tasks[0].scoring_program
    assert scorer is not None and scorer.missing_metrics == "empty"
    installed = service.cli("challenge", "add", str(challenge), "--json", user="olga")
    assert installed.returncode == 0, installed.stderr
    scores = {}
    for user, predictions in (("bob", "b b b b b b\n"), ("eve", "a a a b a b\n")):
        upload = submission_zip(tmp_path / user, predictions)
        done = service.cli("submit", str(upload), "-c", "toy-gaps-challenge", "--json", user=user)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["status"] == "scored", report
        scores[user] = report["scores"]["alpha-task"]
    assert "accuracy" not in scores["bob"] and scores["bob"]["error"] == 0.5
    assert scores["eve"]["accuracy"] == pytest.approx(5 / 6)
    board = service.cli(
        "leaderboard", "toy-gaps-challenge", "--phase", "development-phase", "--board",
        "results", "--json",
    )  # fmt: skip
    assert board.returncode == 0, board.stderr
    rows = json.loads(board.stdout)["rows"]
    assert [(row["rank"], row["team"]) for row in rows] == [(1, "red"), (2, "blue")]
    assert "accuracy" not in rows[1]["scores"]["alpha-task"]  # blue's error beats red's
    with service.http() as client:
        page = client.get(
            "/challenges/toy-gaps-challenge/leaderboards/results",
            params={"phase": "development-phase"},
        )
    assert page.status_code == 200
    blue = page.text[page.text.index(">blue<") :].split("</tr>")[0]
    assert "–" in blue and "0.50" in blue
