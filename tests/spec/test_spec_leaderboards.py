"""The ``leaderboards:`` list of a phase, as ``challenge.yaml`` declares it."""

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from paths import BUNDLED

from proctor.errors import ConfigError
from proctor.leaderboard import ScoredSubmission, compute_phase_board
from proctor.resolve import load_challenge
from proctor.spec.leaderboards import find_board, metric_directions, phase_boards
from proctor.types import Direction


def _task(name: str, scorer: str = "physionet2017") -> dict[str, Any]:
    return {
        "name": name,
        "public_inputs": "public",
        "hidden_inputs": "hidden",
        "hidden_references": "refs",
        "scorer": scorer,
    }


def challenge_data(boards: list[dict[str, Any]], **phase: Any) -> dict[str, Any]:
    """Three AF-classification tasks; phase 'provisional' (two) and 'final' (all three)."""
    return {
        "name": "toy",
        "title": "Toy challenge",
        "protocol": {"kind": "records"},
        "tasks": [_task("subset"), _task("rest"), _task("full")],
        "phases": [
            {"name": "provisional", "tasks": ["subset", "rest"], "leaderboards": boards, **phase},
            {"name": "final", "tasks": ["subset", "rest", "full"]},
        ],
    }


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name in ("public", "hidden", "refs"):
        (tmp_path / name).mkdir()
    return tmp_path


def load(folder: Path, data: dict[str, Any]) -> Any:
    (folder / "challenge.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return load_challenge(folder)


def test_every_phase_has_a_default_and_an_all_board_ranked_on_a_shared_metric(
    folder: Path,
) -> None:
    challenge = load(folder, challenge_data([]))
    default, every = phase_boards(challenge, "final")
    assert (default.name, default.per, default.public) == ("default", "team", True)
    assert (every.name, every.per, every.public) == ("all", "submission", False)
    assert default.tasks == every.tasks == ("subset", "rest", "full")
    assert default.metrics == ("score",)  # the first rankable metric physionet2017 reports


def test_the_challenge_leaderboard_metric_ranks_the_implicit_boards(folder: Path) -> None:
    challenge = load(folder, {**challenge_data([]), "leaderboard": {"metric": "f1_af"}})
    assert find_board(challenge, None, "default").metrics == ("f1_af",)


def test_a_declared_board_loads_with_its_keys_and_gets_the_phase_tasks_when_it_names_none(
    folder: Path,
) -> None:
    boards = [
        {
            "name": "provisional",
            "tasks": ["subset"],
            "metrics": ["score"],
            "ladder": {"step": 0.01},
        },
        {
            "name": "published",
            "metrics": ["f1_af", "records"],
            "aggregation": "best_published",
            "per": "submission",
            "only_final": True,
            "public": False,
        },
    ]
    challenge = load(folder, challenge_data(boards))
    names = [board.name for board in phase_boards(challenge, "provisional")]
    assert names == ["default", "all", "provisional", "published"]
    ladder = find_board(challenge, "provisional", "provisional")
    assert ladder.ladder is not None and ladder.ladder.step == 0.01
    published = find_board(challenge, "provisional", "published")
    assert published.tasks == ("subset", "rest")
    assert (published.aggregation, published.per, published.only_final) == (
        "best_published",
        "submission",
        True,
    )
    assert published.rank_metric == "f1_af"


@pytest.mark.parametrize(
    "guard",
    [{"ladder": {"step": 0.01}}, {"aggregation": "best_published"}],
)
def test_the_default_board_is_not_public_beside_a_ladder_or_a_published_board(
    folder: Path, guard: dict[str, Any]
) -> None:
    challenge = load(folder, challenge_data([{"name": "p", "metrics": ["score"], **guard}]))
    assert not find_board(challenge, "provisional", "default").public
    assert find_board(challenge, "provisional", "p").public
    assert find_board(challenge, "final", "default").public  # the other phase keeps it


def test_an_unknown_board_is_a_key_error_listing_the_boards(folder: Path) -> None:
    challenge = load(folder, challenge_data([]))
    with pytest.raises(KeyError, match="boards: default, all"):
        find_board(challenge, "final", "provisional")


def test_metric_directions_come_from_the_scorers(folder: Path) -> None:
    challenge = load(folder, challenge_data([]))
    directions = metric_directions(challenge)
    assert directions["score"] is Direction.HIGHER
    assert directions["records"] is Direction.NEUTRAL


@pytest.mark.parametrize(
    ("board", "location", "message"),
    [
        ({"name": "default", "metrics": ["score"]}, r"leaderboards\[0\]\.name", "already has"),
        ({"name": "b", "metrics": ["score"], "tasks": ["full"]}, r"tasks\[0\]", "not in this"),
        ({"name": "b", "metrics": ["auprc"]}, r"metrics\[0\]", "do not report 'auprc'"),
        ({"name": "b", "metrics": ["records"]}, r"metrics\[0\]", "is a count"),
        ({"name": "b", "metrics": []}, r"leaderboards\[0\]\.metrics", "at least 1"),
        ({"name": "b", "metrics": ["score"], "aggregation": "metric"}, r"\.tasks", "exactly one"),
        ({"name": "b", "metrics": ["score"], "per": "entry"}, r"\.per", "'team' or 'submission'"),
        ({"name": "b", "metrics": ["score"], "sort": "asc"}, r"\.sort", "unknown key"),
        (
            {"name": "b", "metrics": ["score"], "per": "submission", "ladder": {"step": 0.1}},
            r"leaderboards\[0\]\.per",
            "one shown score per team",
        ),
        (
            {"name": "b", "metrics": ["score", "f1_af"], "ladder": {"step": 0.1}},
            r"leaderboards\[0\]\.metrics",
            "only its ranking metric",
        ),
        (
            {"name": "b", "metrics": ["score"], "ladder": {"step": "0.1"}},
            r"ladder\.step",
            "valid number",
        ),
        (
            {"name": "b", "metrics": ["score"], "ladder": {"step": 0}},
            r"ladder\.step",
            "greater than 0",
        ),
        (
            {"name": "b", "metrics": ["score"], "aggregation": "best_published", "ladder": {}},
            r"ladder\.step",
            "required key is missing",
        ),
    ],
)
def test_a_wrong_board_is_an_error_naming_file_and_yaml_path(
    folder: Path, board: dict[str, Any], location: str, message: str
) -> None:
    with pytest.raises(ConfigError) as error:
        load(folder, challenge_data([board]))
    text = str(error.value)
    assert str(folder / "challenge.yaml") in text
    assert "phases[0]" in text
    assert re.search(location, text), text
    assert message in text


def test_two_boards_of_one_name_in_a_phase_clash(folder: Path) -> None:
    boards = [{"name": "b", "metrics": ["score"]}, {"name": "b", "metrics": ["f1_af"]}]
    with pytest.raises(ConfigError, match=r"phases\[0\]\.leaderboards\[1\]\.name: .*used twice"):
        load(folder, challenge_data(boards))


def test_every_problem_of_the_boards_is_listed_at_once(folder: Path) -> None:
    boards = [
        {"name": "a", "metrics": ["auprc"], "tasks": ["nowhere", "subset"]},
        {"name": "a", "metrics": ["records"]},
    ]
    with pytest.raises(ConfigError) as error:
        load(folder, challenge_data(boards))
    text = str(error.value)
    assert "4 problems" in text
    for location in (
        "phases[0].leaderboards[0].tasks[0]",
        "phases[0].leaderboards[0].metrics[0]",
        "phases[0].leaderboards[1].name",
        "phases[0].leaderboards[1].metrics[0]",
    ):
        assert location in text


def test_contradictions_inside_one_board_are_listed_together(folder: Path) -> None:
    board = {
        "name": "b",
        "metrics": ["score", "score"],
        "aggregation": "best_published",
        "ladder": {"step": 0.1},
    }
    with pytest.raises(ConfigError) as error:
        load(folder, challenge_data([board]))
    text = str(error.value)
    assert "3 problems" in text
    for part in ("metrics[1]: ", "aggregation: ", "metrics: "):
        assert part in text


def test_tasks_without_a_shared_rankable_metric_need_the_leaderboard_metric(
    folder: Path,
) -> None:
    data = challenge_data([])
    data["tasks"][2] = _task("full", scorer="physionet2018")
    with pytest.raises(ConfigError, match=r"phases\[1\]\.tasks: .*declare leaderboard\.metric"):
        load(folder, data)


def test_the_bundled_challenge_still_loads_with_its_implicit_boards() -> None:
    root = BUNDLED / "physionet2018"
    challenge = load_challenge(root)
    assert [b.metrics for b in phase_boards(challenge, None)] == [("auprc",), ("auprc",)]


def test_a_declared_board_is_computed_by_name_with_the_scorers_directions(folder: Path) -> None:
    boards = [{"name": "sub", "tasks": ["subset"], "metrics": ["score"], "ladder": {"step": 0.1}}]
    challenge = load(folder, challenge_data(boards))
    when = datetime(2025, 5, 1, tzinfo=UTC)
    subs = [
        ScoredSubmission("a", "owls", when, {"subset": {"score": 0.52}, "rest": {"score": 0.1}}),
        ScoredSubmission("b", "larks", when, {"subset": {"score": 0.61}}),
    ]
    result = compute_phase_board(challenge, "provisional", "sub", subs)
    assert (result.challenge, result.phase, result.name) == ("toy", "provisional", "sub")
    assert [(r.team, r.scores) for r in result.rows] == [
        ("larks", {"subset": {"score": 0.6}}),
        ("owls", {"subset": {"score": 0.5}}),
    ]
    default = compute_phase_board(challenge, None, "default", subs)
    assert (default.phase, default.tasks) == ("final", ("subset", "rest", "full"))
    with pytest.raises(KeyError, match="no board 'nope'"):
        compute_phase_board(challenge, None, "nope", subs)
