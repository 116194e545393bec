"""A ``scorer: {table: ...}`` predictions challenge through a real `proctor serve`: installed,
two teams' CSV uploads scored by log loss, and the board ranks the lower loss first."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import sklearn.metrics as skm
from cli_service import Service, archive
from table_challenge import DEV, TEST, make_table_challenge

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
CLASSES = ("bird", "cat", "dog")


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    env = dict(os.environ, PROCTOR_DATA=str(tmp_path / "data"))
    env.pop("PROCTOR_ALLOW_HOST_ENVIRONMENT", None)  # a predictions challenge needs no exception
    env.pop("PROCTOR_DATABASE_URL", None)
    env.pop("PROCTOR_TOKEN", None)
    svc = Service(tmp_path / "data", env)
    for name, extra in (("olga", ["--organizer"]), ("bob", ["--team", "blue"]),
                        ("eve", ["--team", "red"])):  # fmt: skip
        added = svc.cli("user", "add", name, *extra, "--json")
        assert added.returncode == 0, added.stderr
        svc.tokens[name] = json.loads(added.stdout)["token"]
    svc.start()
    challenge = make_table_challenge(tmp_path / "tabular", metric="log_loss")
    installed = svc.cli("challenge", "add", str(challenge), "--json", user="olga")
    assert installed.returncode == 0, installed.stderr
    yield svc
    svc.stop()


def _probabilities(answers: dict[str, str], sure: float) -> dict[str, list[float]]:
    other = (1 - sure) / 2
    return {key: [sure if c == label else other for c in CLASSES] for key, label in answers.items()}


def _upload(tmp_path: Path, name: str, sure: float) -> Path:
    entry = tmp_path / name
    for split, answers in (("dev", DEV), ("test", TEST)):
        folder = entry / split / "main"
        folder.mkdir(parents=True)
        rows = "".join(
            f"{key},{','.join(repr(p) for p in probs)}\n"
            for key, probs in _probabilities(answers, sure).items()
        )
        (folder / "submission.csv").write_text("id," + ",".join(CLASSES) + "\n" + rows)
    return archive(entry, tmp_path / f"{name}.tar.gz")


@pytest.mark.very_slow  # a minute or more of a slow machine's CI: `make test-slow`
def test_the_board_ranks_the_lower_log_loss_first(service: Service, tmp_path: Path) -> None:
    losses = {}
    for user, sure in (("bob", 0.5), ("eve", 0.9)):
        done = service.cli("submit", str(_upload(tmp_path, user, sure)), "-c", "tabular",
                           "--json", user=user)  # fmt: skip
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["status"] == "scored", report
        losses[user] = report["scores"]["main"]["log_loss"]
        truth = list(TEST.values())
        expected = skm.log_loss(truth, list(_probabilities(TEST, sure).values()))
        assert losses[user] == pytest.approx(expected, rel=1e-12)
    board = service.cli("leaderboard", "tabular", "--json")
    assert board.returncode == 0, board.stderr
    rows = json.loads(board.stdout)["rows"]
    assert [(row["rank"], row["team"]) for row in rows] == [(1, "red"), (2, "blue")]
    assert losses["eve"] < losses["bob"]
