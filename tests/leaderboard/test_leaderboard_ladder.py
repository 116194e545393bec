"""The Ladder (Blum & Hardt, ICML 2015) on provisional boards."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from leaderboard_strategies import DIRECTIONS, board, scored

from proctor.leaderboard import climb, compute_board

STEPS = st.sampled_from([0.01, 0.05, 0.25, 1.0])
VALUES = st.lists(st.one_of(st.just(math.nan), st.floats(-10.0, 10.0)), max_size=30)


def test_a_hand_computed_ladder_moves_only_past_a_step_and_rounds() -> None:
    values = [math.nan, 0.5012, 0.507, 0.5111, 0.5150, 0.49, 0.5301]
    shown = climb(values, step=0.01, higher=True)
    assert math.isnan(shown[0][0]) and shown[0][1] == -1  # nothing to show yet
    assert shown[1:] == [
        (0.50, 1),  # the first result, rounded
        (0.50, 1),  # +0.0058: within the step
        (0.51, 3),  # 0.5111 > 0.50 + 0.01: moves, rounded
        (0.51, 3),  # 0.5150 is not above 0.52
        (0.51, 3),  # a worse result never moves it
        (0.53, 6),
    ]


@pytest.mark.parametrize(
    ("values", "higher", "expected"),
    [
        ([0.500, 0.509, 0.511], True, [0.50, 0.50, 0.51]),
        ([0.500, 0.516, 0.5349], True, [0.50, 0.52, 0.53]),
        ([0.800, 0.700, 0.950], True, [0.80, 0.80, 0.95]),
        ([3.20, 3.15, 2.96], False, [3.20, 3.20, 3.00]),
    ],
)
def test_worked_examples_of_the_ladder(
    values: list[float], higher: bool, expected: list[float]
) -> None:
    shown = [value for value, _ in climb(values, step=0.01 if higher else 0.1, higher=higher)]
    assert shown == pytest.approx(expected)


@settings(max_examples=200, deadline=None)
@given(VALUES, STEPS, st.booleans())
def test_the_shown_value_only_improves_and_only_when_beaten_by_more_than_a_step(
    values: list[float], step: float, higher: bool
) -> None:
    shown = climb(values, step=step, higher=higher)
    sign = 1.0 if higher else -1.0
    previous = (math.nan, -1)
    for index, (value, source) in enumerate(shown):
        if source != previous[1]:  # the value moved: this result set it
            assert source == index
            assert value / step == pytest.approx(round(value / step), abs=1e-6)  # a multiple
            assert abs(value - values[index]) <= step / 2 + 1e-9  # the result, rounded
            if previous[1] >= 0:
                assert sign * (values[index] - previous[0]) > step - 1e-9  # beat it by > step
                assert sign * (value - previous[0]) >= step - 1e-9  # moved by a step or more
        else:
            assert value == previous[0] or (math.isnan(value) and math.isnan(previous[0]))
            if previous[1] >= 0 and not math.isnan(values[index]):
                assert sign * (values[index] - previous[0]) <= step + 1e-9
        previous = (value, source)


def test_a_nonpositive_step_is_refused() -> None:
    with pytest.raises(ValueError, match="positive finite"):
        climb([0.5], step=0.0, higher=True)


def test_a_ladder_board_shows_rounded_values_from_the_submission_that_moved_them() -> None:
    subs = [
        scored("o1", "owls", 0, {"x": {"auc": 0.8012}}),
        scored("o2", "owls", 1, {"x": {"auc": 0.8093}}),  # +0.008: the board does not move
        scored("l1", "larks", 2, {"x": {"auc": 0.8050}}),
        scored("o3", "owls", 3, {"x": {"auc": 0.8231}}),
        scored("o4", "owls", 4, {"x": {"auc": 0.8299}}),  # not a step above 0.82
    ]
    spec = board(tasks=("x",), ladder={"step": 0.01})
    result = compute_board(spec, subs, DIRECTIONS)
    assert [(r.team, r.submission, r.scores["x"]["auc"]) for r in result.rows] == [
        ("owls", "o3", 0.82),
        ("larks", "l1", 0.81),
    ]
    assert all(row.ci95 is None for row in result.rows)  # an interval would undo the rounding
    assert result.ladder_step == 0.01


def test_a_ladder_board_processes_submissions_in_time_order_whatever_the_input_order() -> None:
    late_best = scored("b", "owls", 5, {"x": {"auc": 0.95}})
    early = scored("a", "owls", 1, {"x": {"auc": 0.90}})
    spec = board(tasks=("x",), ladder={"step": 0.1})
    for subs in ([late_best, early], [early, late_best]):
        row = compute_board(spec, subs, DIRECTIONS).rows[0]
        assert (row.submission, row.scores["x"]["auc"]) == ("a", 0.9)


def test_a_ladder_over_several_tasks_keeps_one_ladder_per_task() -> None:
    subs = [
        scored("o1", "owls", 0, {"x": {"auc": 0.50}, "y": {"auc": 0.70}}),
        scored("o2", "owls", 1, {"x": {"auc": 0.70}, "y": {"auc": 0.71}}),
    ]
    row = compute_board(board(ladder={"step": 0.05}), subs, DIRECTIONS).rows[0]
    assert row.scores == {"x": {"auc": 0.70}, "y": {"auc": 0.70}}
    assert row.sources == {"x": "o2", "y": "o1"}
    assert row.submission == "o2"
