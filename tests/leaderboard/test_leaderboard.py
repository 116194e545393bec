import math

import pytest

from proctor.leaderboard import build_leaderboard


def test_one_task_orders_entries_by_score_best_first() -> None:
    rows = build_leaderboard({"a": {"t": 0.5}, "b": {"t": 0.9}, "c": {"t": 0.7}}, tasks=["t"])
    assert [(r.entry, r.rank) for r in rows] == [("b", 1.0), ("c", 2.0), ("a", 3.0)]


def test_several_tasks_are_combined_by_mean_rank_with_shared_ties() -> None:
    results = {
        "a": {"x": 0.9, "y": 0.1},
        "b": {"x": 0.8, "y": 0.5},
        "c": {"x": 0.1, "y": 0.2},
    }
    rows = build_leaderboard(results, tasks=["x", "y"])
    by_entry = {r.entry: r for r in rows}
    assert by_entry["a"].mean_rank == 2.0
    assert by_entry["b"].mean_rank == 1.5
    assert by_entry["c"].mean_rank == 2.5
    assert [r.entry for r in rows] == ["b", "a", "c"]


def test_a_missing_result_never_ranks_first() -> None:
    rows = build_leaderboard({"a": {}, "b": {"t": 0.1}}, tasks=["t"])
    assert rows[0].entry == "b"
    assert math.isnan(rows[1].scores["t"])


def test_lower_is_better_metrics_rank_the_smallest_first() -> None:
    rows = build_leaderboard(
        {"a": {"t": 3.0}, "b": {"t": 1.0}}, tasks=["t"], higher_is_better=False
    )
    assert rows[0].entry == "b"


@pytest.mark.parametrize("n", [0])
def test_an_empty_leaderboard_is_empty(n: int) -> None:
    assert build_leaderboard({}, tasks=["t"]) == []
