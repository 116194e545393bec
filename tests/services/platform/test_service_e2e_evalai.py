"""An imported EvalAI challenge through a real `proctor serve`: installed with `challenge add`,
two teams submit the file they would upload to EvalAI, and the phase's board (the
leaderboard's labels as columns, `default_order_by` first) ranks the better accuracy first."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_service import Service, archive
from evalai_challenge import SUBMISSION, make_evalai_challenge, make_upload

from proctor.environments.store import BuiltEnvironment
from proctor.services.local.bundle_import import import_challenge

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.environment]
NAME = "toy-accuracy-challenge-evalai"


@pytest.fixture
def service(tmp_path: Path, codabench_env: BuiltEnvironment) -> Iterator[Service]:
    env = dict(os.environ, PROCTOR_DATA=str(tmp_path / "data"))
    env.pop("PROCTOR_ALLOW_HOST_ENVIRONMENT", None)  # the script runs in `codabench`
    env.pop("PROCTOR_DATABASE_URL", None)
    env.pop("PROCTOR_TOKEN", None)
    svc = Service(tmp_path / "data", env)
    for name, extra in (("olga", ["--organizer"]), ("bob", ["--team", "blue"]),
                        ("eve", ["--team", "red"])):  # fmt: skip
        added = svc.cli("user", "add", name, *extra, "--json")
        assert added.returncode == 0, added.stderr
        svc.tokens[name] = json.loads(added.stdout)["token"]
    svc.start()
    source = make_evalai_challenge(tmp_path / "source")
    import_challenge(source, tmp_path / "challenge")
    installed = svc.cli("challenge", "add", str(tmp_path / "challenge"), "--json", user="olga")
    assert installed.returncode == 0, installed.stderr
    yield svc
    svc.stop()


def test_submissions_are_scored_and_ranked_on_the_labels(service: Service, tmp_path: Path) -> None:
    perfect = {**SUBMISSION, "b": 0, "d": 1, "g": 0}  # every label right
    accuracy = {}
    for user, guesses in (("bob", SUBMISSION), ("eve", perfect)):
        upload = archive(make_upload(tmp_path / user, guesses), tmp_path / f"{user}.tar.gz")
        done = service.cli("submit", str(upload), "-c", NAME, "--phase", "test", "--json",
                           user=user)  # fmt: skip
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["status"] == "scored", report
        accuracy[user] = report["scores"]["test-test-split"]["Accuracy"]
    assert accuracy == {"bob": 0.8, "eve": 1.0}
    board = service.cli("leaderboard", NAME, "--phase", "test", "--board", "leaderboard-1",
                        "--json", user="olga")  # fmt: skip
    assert board.returncode == 0, board.stderr
    shown = json.loads(board.stdout)
    assert [(row["rank"], row["team"]) for row in shown["rows"]] == [(1, "red"), (2, "blue")]
