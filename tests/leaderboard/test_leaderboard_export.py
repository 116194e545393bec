"""Bootstrap intervals on boards, and the JSON and CSV exports (``leaderboard --json`` shape)."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from leaderboard_strategies import DIRECTIONS, board, scored, submissions

from proctor.leaderboard import (
    Board,
    ScoredSubmission,
    board_from_dict,
    board_to_csv,
    board_to_dict,
    board_to_json,
    compute_board,
    rows_from_csv,
)
from proctor.spec.leaderboards import BoardSpec

RESAMPLES = 200


def _with_cases(seed: int, means: dict[str, float], n_cases: int = 40) -> list[ScoredSubmission]:
    """One submission per team whose Dice on task x is the mean of noisy per-case values."""
    rng = np.random.default_rng(seed)
    made = []
    for hour, (team, mean) in enumerate(means.items()):
        cases = np.clip(rng.normal(mean, 0.05, n_cases), 0.0, 1.0).tolist()
        made.append(
            scored(
                f"{team}-1",
                team,
                hour,
                {"x": {"dice": float(np.mean(cases)), "auc": 0.5}},
                cases={"x": {"dice": cases}},
            )
        )
    return made


DICE = BoardSpec(name="dice", tasks=("x",), metrics=("dice", "auc"), aggregation="metric")


def test_score_intervals_hold_the_score_and_separated_entries_have_settled_ranks() -> None:
    subs = _with_cases(1, {"owls": 0.9, "larks": 0.6, "crows": 0.3})
    rows = compute_board(DICE, subs, DIRECTIONS, n_resamples=RESAMPLES).rows
    for row in rows:
        assert row.ci95 is not None and row.ci95.rank is not None
        low, high = row.ci95.scores["x"]["dice"]
        assert low <= row.scores["x"]["dice"] <= high
        assert high - low < 0.1
        assert row.ci95.rank == (row.rank, row.rank)  # 0.3 apart with 40 cases: never swapped
        assert "auc" not in row.ci95.scores["x"]  # no per-case values stored for it
        assert row.ci95.cases == {"x": {"dice": 40}}  # every interval has its number of cases


def test_close_entries_get_rank_intervals_that_overlap() -> None:
    subs = _with_cases(2, {"owls": 0.80, "larks": 0.80, "crows": 0.10}, n_cases=10)
    rows = {r.team: r for r in compute_board(DICE, subs, DIRECTIONS, n_resamples=RESAMPLES).rows}
    owls, larks = rows["owls"].ci95, rows["larks"].ci95
    assert owls is not None and larks is not None
    assert owls.rank == larks.rank == (1.0, 2.0)
    assert rows["crows"].ci95 is not None and rows["crows"].ci95.rank == (3.0, 3.0)


def test_intervals_are_deterministic_for_a_seed_and_vary_with_it() -> None:
    subs = _with_cases(3, {"owls": 0.7, "larks": 0.69}, n_cases=15)
    first = compute_board(DICE, subs, DIRECTIONS, seed=5, n_resamples=RESAMPLES)
    again = compute_board(DICE, list(reversed(subs)), DIRECTIONS, seed=5, n_resamples=RESAMPLES)
    other = compute_board(DICE, subs, DIRECTIONS, seed=6, n_resamples=RESAMPLES)
    assert first == again
    assert [r.ci95 for r in first.rows] != [r.ci95 for r in other.rows]


def test_a_row_without_per_case_values_still_gets_a_rank_interval_from_the_others() -> None:
    subs = [*_with_cases(4, {"owls": 0.5}), scored("l", "larks", 9, {"x": {"dice": 0.5}})]
    rows = {r.team: r for r in compute_board(DICE, subs, DIRECTIONS, n_resamples=RESAMPLES).rows}
    larks = rows["larks"].ci95
    assert larks is not None and larks.scores == {} and larks.rank == (1.0, 2.0)


def test_no_per_case_values_means_no_intervals() -> None:
    subs = [scored("a", "owls", 0, {"x": {"auc": 0.9}})]
    assert compute_board(board(tasks=("x",)), subs, DIRECTIONS).rows[0].ci95 is None


def test_cases_of_another_length_or_only_nan_are_left_out_of_the_paired_bootstrap() -> None:
    nan = float("nan")
    subs = [
        *_with_cases(5, {"owls": 0.8, "larks": 0.4}, n_cases=12),
        scored("c", "crows", 7, {"x": {"dice": 0.6}}, cases={"x": {"dice": [0.6] * 5}}),
        scored("d", "doves", 8, {"x": {"dice": 0.2}}, cases={"x": {"dice": [nan, nan]}}),
    ]
    rows = {r.team: r for r in compute_board(DICE, subs, DIRECTIONS, n_resamples=RESAMPLES).rows}
    for team in ("crows", "doves"):
        interval = rows[team].ci95
        assert interval is not None and interval.scores == {} and interval.cases == {}


def _board(subs: list[ScoredSubmission], spec: BoardSpec) -> Board:
    return compute_board(spec, subs, DIRECTIONS, challenge="toy", phase="final")


def test_the_json_has_the_contract_shape() -> None:
    subs = _with_cases(6, {"owls": 0.9, "larks": 0.6})
    data = json.loads(board_to_json(_board(subs, DICE)))
    assert {"challenge", "phase", "board", "rows"} <= set(data)
    assert (data["challenge"], data["phase"], data["board"]) == ("toy", "final", "dice")
    row = data["rows"][0]
    assert {"rank", "team", "submission", "scores", "ci95", "mean_rank"} <= set(row)
    assert row["team"] == "owls" and set(row["scores"]["x"]) == {"dice", "auc"}
    low, high = row["ci95"]["scores"]["x"]["dice"]
    assert low <= row["scores"]["x"]["dice"] <= high
    assert row["ci95"]["cases"] == {"x": {"dice": 40}}


def test_a_case_count_leaves_out_nan_cases_and_an_older_board_reads_back_without() -> None:
    nan = float("nan")
    owls = [0.9, nan, 0.8, 1.0, 0.9, 0.9, 0.8, 1.0, 0.9, nan]
    subs = [
        scored("o", "owls", 0, {"x": {"dice": 0.9}}, cases={"x": {"dice": owls}}),
        scored("l", "larks", 1, {"x": {"dice": 0.6}}, cases={"x": {"dice": [0.5, 0.7] * 5}}),
    ]
    data = board_to_dict(_board(subs, DICE))
    assert {r["team"]: r["ci95"]["cases"] for r in data["rows"]} == {
        "owls": {"x": {"dice": 8}},
        "larks": {"x": {"dice": 10}},
    }
    for row in data["rows"]:
        del row["ci95"]["cases"]
    assert all(row.ci95 and row.ci95.cases == {} for row in board_from_dict(data).rows)


def test_a_missing_result_is_absent_from_the_json_never_nan() -> None:
    subs = [scored("a", "owls", 0, {}), scored("b", "larks", 1, {"x": {"auc": 0.5}})]
    text = board_to_json(_board(subs, board()))
    assert "NaN" not in text
    assert json.loads(text)["rows"][1]["scores"] == {}


SPECS = st.sampled_from(
    [
        board(title="Provisional"),
        board(per="submission"),
        board(aggregation="best_published"),
        board(ladder={"step": 0.1}),
    ]
)


@settings(max_examples=40, deadline=None)
@given(submissions(), SPECS)
def test_json_and_csv_read_back_the_same_board(
    subs: list[ScoredSubmission], spec: BoardSpec
) -> None:
    computed = _board(subs, spec)
    assert board_from_dict(json.loads(board_to_json(computed))) == computed
    assert rows_from_csv(board_to_csv(computed)) == computed.rows


def test_csv_read_back_keeps_intervals() -> None:
    computed = _board(_with_cases(7, {"owls": 0.9, "larks": 0.6}), DICE)
    assert rows_from_csv(board_to_csv(computed)) == computed.rows
    assert board_from_dict(board_to_dict(computed)) == computed


def test_the_csv_header_names_tasks_metrics_intervals_and_sources() -> None:
    computed = _board(_with_cases(8, {"owls": 0.9}), DICE)
    header = board_to_csv(computed).splitlines()[0].split(",")
    assert header[:5] == ["rank", "team", "submission", "submitted_at", "mean_rank"]
    assert {"x/dice", "x/auc", "x/dice ci95_low", "x/dice ci95_high", "x source"} <= set(header)
    assert "x/dice ci95_n" in header


def test_a_team_name_cannot_plant_a_spreadsheet_formula_in_the_csv() -> None:
    subs = [scored("+s1", '=HYPERLINK("http://evil")', 0, {"x": {"auc": 0.5}})]
    computed = _board(subs, board(tasks=("x",)))
    cells = next(csv.DictReader(io.StringIO(board_to_csv(computed))))
    assert cells["team"].startswith("'=") and cells["submission"] == "'+s1"
    assert cells["x source"] == "'+s1"
    assert rows_from_csv(board_to_csv(computed)) == computed.rows


@pytest.mark.parametrize("name", ["'quoted", "-dash", "@at", "plain"])
def test_text_cells_read_back_exactly_whatever_they_start_with(name: str) -> None:
    computed = _board([scored("s", name, 0, {"x": {"auc": 0.5}})], board(tasks=("x",)))
    assert rows_from_csv(board_to_csv(computed))[0].team == name


def test_the_csv_writes_whole_ranks_as_integers() -> None:
    computed = _board(_with_cases(9, {"owls": 0.9, "larks": 0.6}), DICE)
    rows = list(csv.DictReader(io.StringIO(board_to_csv(computed))))
    assert [row["rank"] for row in rows] == ["1", "2"]
    assert {rows[0]["rank_ci95_low"], rows[0]["rank_ci95_high"]} == {"1"}
    assert rows_from_csv(board_to_csv(computed)) == computed.rows
