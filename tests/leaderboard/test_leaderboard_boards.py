"""Computing declared boards: selection, ranking, the worked examples of AutoWSL and VISCERAL."""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from leaderboard_strategies import DIRECTIONS, board, scored, submissions

from proctor.leaderboard import BoardInputError, ScoredSubmission, compute_board
from proctor.spec.leaderboards import BoardSpec

FAST = settings(max_examples=60, deadline=None)


def test_autowsl_style_mean_rank_over_datasets_with_ties_and_a_missing_result() -> None:
    # Ranks d1: A 1, B 2.5, C 2.5 · d2: B 1, A 2, C 3 · d3 (A missing): C 1, B 2, A 3.
    subs = [
        scored("a1", "A", 0, {"d1": {"auc": 0.90}, "d2": {"auc": 0.70}}),
        scored("b1", "B", 1, {"d1": {"auc": 0.85}, "d2": {"auc": 0.80}, "d3": {"auc": 0.60}}),
        scored("c1", "C", 2, {"d1": {"auc": 0.85}, "d2": {"auc": 0.60}, "d3": {"auc": 0.70}}),
    ]
    result = compute_board(board(tasks=("d1", "d2", "d3")), subs, DIRECTIONS)
    rows = {row.team: row for row in result.rows}
    assert [row.team for row in result.rows] == ["B", "A", "C"]
    assert rows["A"].mean_rank == pytest.approx(2.0)
    assert rows["B"].mean_rank == pytest.approx(5.5 / 3)
    assert rows["C"].mean_rank == pytest.approx(6.5 / 3)
    assert [row.rank for row in result.rows] == [1.0, 2.0, 3.0]
    assert rows["A"].scores == {"d1": {"auc": 0.90}, "d2": {"auc": 0.70}}  # d3 absent, not NaN


def _organs(liver: float, kidney: float, spleen: float) -> dict[str, dict[str, float]]:
    return {"liver": {"dice": liver}, "kidney": {"dice": kidney}, "spleen": {"dice": spleen}}


VISCERAL = [
    # Team X: x1 publishes only its liver; x2 liver and kidney; x3's kidney is best, unpublished.
    scored("x1", "X", 0, _organs(0.90, 0.50, 0.99), published=["liver"]),
    scored("x2", "X", 1, _organs(0.85, 0.80, 0.99), published=["liver", "kidney"]),
    scored("x3", "X", 2, _organs(0.10, 0.95, 0.99), published=[]),
    scored("y1", "Y", 3, _organs(0.88, 0.70, 0.60), published=["liver", "kidney", "spleen"]),
    scored("z1", "Z", 4, _organs(0.99, 0.99, 0.99), published=[]),
]


def test_visceral_style_best_published_result_per_organ() -> None:
    spec = BoardSpec(
        name="organs",
        tasks=("liver", "kidney", "spleen"),
        metrics=("dice",),
        aggregation="best_published",
    )
    result = compute_board(spec, VISCERAL, DIRECTIONS)
    x, y = result.rows  # Z published nothing: no row
    assert (x.team, y.team) == ("X", "Y")
    assert x.scores == {"liver": {"dice": 0.90}, "kidney": {"dice": 0.80}}
    assert x.sources == {"liver": "x1", "kidney": "x2"}
    assert x.submission == "x2"  # the most recent submission the row draws on
    # liver: X 1, Y 2 · kidney: X 1, Y 2 · spleen (X unpublished): Y 1, X 2
    assert x.mean_rank == pytest.approx(4 / 3)
    assert y.mean_rank == pytest.approx(5 / 3)


def test_a_per_organ_board_shows_the_best_published_dice_of_each_team() -> None:
    spec = BoardSpec(
        name="kidney", tasks=("kidney",), metrics=("dice",), aggregation="best_published"
    )
    rows = compute_board(spec, VISCERAL, DIRECTIONS).rows
    assert [(r.team, r.submission, r.scores["kidney"]["dice"]) for r in rows] == [
        ("X", "x2", 0.80),
        ("Y", "y1", 0.70),
    ]


def test_best_published_per_submission_lists_each_submission_with_its_published_organs() -> None:
    spec = BoardSpec(
        name="p",
        tasks=("liver", "kidney"),
        metrics=("dice",),
        aggregation="best_published",
        per="submission",
    )
    rows = compute_board(spec, VISCERAL, DIRECTIONS).rows
    assert {r.submission: set(r.sources) for r in rows} == {
        "x1": {"liver"},
        "x2": {"liver", "kidney"},
        "y1": {"liver", "kidney"},
    }


def test_per_team_keeps_each_teams_best_submission_and_ranks_those() -> None:
    subs = [
        scored("o1", "owls", 0, {"x": {"auc": 0.6}}),
        scored("o2", "owls", 1, {"x": {"auc": 0.9}}),
        scored("l1", "larks", 2, {"x": {"auc": 0.8}}),
        scored("o3", "owls", 3, {"x": {"auc": 0.9}}),  # equal to o2, later: o2 stays
    ]
    rows = compute_board(board(tasks=("x",)), subs, DIRECTIONS).rows
    assert [(r.rank, r.team, r.submission) for r in rows] == [
        (1.0, "owls", "o2"),
        (2.0, "larks", "l1"),
    ]


def test_per_submission_ranks_every_submission_and_ties_share_the_average_rank() -> None:
    subs = [
        scored("a", "owls", 0, {"x": {"auc": 0.9}}),
        scored("b", "larks", 1, {"x": {"auc": 0.9}}),
        scored("c", "owls", 2, {"x": {"auc": 0.7}}),
    ]
    rows = compute_board(board(tasks=("x",), per="submission"), subs, DIRECTIONS).rows
    assert [(r.rank, r.submission) for r in rows] == [(1.5, "a"), (1.5, "b"), (3.0, "c")]


def test_a_lower_is_better_metric_ranks_the_smallest_first() -> None:
    subs = [
        scored("a", "owls", 0, {"x": {"distance": 3.0}}),
        scored("b", "larks", 1, {"x": {"distance": 1.0}}),
    ]
    spec = BoardSpec(name="d", tasks=("x",), metrics=("distance",), aggregation="metric")
    assert [r.team for r in compute_board(spec, subs, DIRECTIONS).rows] == ["larks", "owls"]


def test_only_final_ranks_the_final_entries_alone() -> None:
    subs = [
        scored("a", "owls", 0, {"x": {"auc": 0.99}}),
        scored("b", "owls", 1, {"x": {"auc": 0.70}}, final=True),
        scored("c", "larks", 2, {"x": {"auc": 0.80}}),
    ]
    rows = compute_board(board(tasks=("x",), only_final=True), subs, DIRECTIONS).rows
    assert [(r.team, r.submission) for r in rows] == [("owls", "b")]


def test_shown_metrics_come_from_the_ranked_submission_and_a_board_carries_its_keys() -> None:
    subs = [scored("a", "owls", 0, {"x": {"auc": 0.9, "count": 7.0}})]
    spec = board(tasks=("x",), metrics=("auc", "count"), public=False)
    result = compute_board(spec, subs, DIRECTIONS, challenge="c", phase="p")
    assert result.rows[0].scores == {"x": {"auc": 0.9, "count": 7.0}}
    assert (result.challenge, result.phase, result.name, result.public) == ("c", "p", "b", False)


def test_an_empty_board_has_no_rows() -> None:
    assert compute_board(board(), [], DIRECTIONS).rows == ()


@pytest.mark.parametrize(
    ("spec", "subs", "message"),
    [
        (board(tasks=()), [], "names no tasks"),
        (board(metrics=("f1",)), [], "no direction given for metric"),
        (board(metrics=("count",)), [], "is a count"),
        (
            board(),
            [scored("a", "owls", 0, {}), scored("a", "larks", 1, {})],
            "'a' is given twice",
        ),
    ],
)
def test_what_cannot_be_ranked_is_refused_clearly(
    spec: BoardSpec, subs: list[ScoredSubmission], message: str
) -> None:
    with pytest.raises(BoardInputError, match=message):
        compute_board(spec, subs, DIRECTIONS)


def test_an_infinite_score_is_refused_when_the_submission_is_built() -> None:
    with pytest.raises(BoardInputError, match=r"'a': x/auc is infinite"):
        scored("a", "owls", 0, {"x": {"auc": math.inf}})


def test_a_naive_submission_time_is_taken_as_utc() -> None:
    naive = ScoredSubmission("a", "owls", datetime(2025, 1, 1), {})
    assert naive.submitted_at.utcoffset() is not None


def _summary(subs: list[ScoredSubmission], spec: BoardSpec) -> list[tuple[object, ...]]:
    rows = compute_board(spec, subs, DIRECTIONS).rows
    return [(r.rank, r.team, r.submission, r.mean_rank, r.scores) for r in rows]


SPECS = st.sampled_from(
    [
        board(),
        board(per="submission"),
        board(aggregation="best_published"),
        board(only_final=True),
        board(tasks=("x",), aggregation="metric"),
    ]
)


@FAST
@given(submissions(), SPECS, st.randoms(use_true_random=False))
def test_ranks_do_not_depend_on_the_order_of_the_input(
    subs: list[ScoredSubmission], spec: BoardSpec, random: object
) -> None:
    shuffled = list(subs)
    random.shuffle(shuffled)  # type: ignore[attr-defined]
    assert _summary(subs, spec) == _summary(shuffled, spec)


@FAST
@given(submissions(), st.booleans())
def test_per_team_keeps_one_row_per_team_with_a_submission(
    subs: list[ScoredSubmission], only_final: bool
) -> None:
    rows = compute_board(board(only_final=only_final), subs, DIRECTIONS).rows
    teams = Counter(row.team for row in rows)
    assert set(teams.values()) <= {1}
    assert set(teams) == {s.team for s in subs if s.final or not only_final}


@FAST
@given(submissions())
def test_ranks_average_over_ties_and_sum_like_distinct_ranks(
    subs: list[ScoredSubmission],
) -> None:
    rows = compute_board(board(per="submission"), subs, DIRECTIONS).rows
    n = len(rows)
    assert sum(row.rank for row in rows) == pytest.approx(n * (n + 1) / 2)
    for row in rows:  # a row's rank is 1 + rows strictly better + half of the others tied
        better = sum(other.mean_rank < row.mean_rank for other in rows)
        tied = sum(other.mean_rank == row.mean_rank for other in rows) - 1
        assert row.rank == pytest.approx(1 + better + tied / 2)
    assert [row.rank for row in rows] == sorted(row.rank for row in rows)


@FAST
@given(submissions())
def test_the_per_team_row_is_the_best_of_the_teams_submissions_on_one_task(
    subs: list[ScoredSubmission],
) -> None:
    rows = compute_board(board(tasks=("x",)), subs, DIRECTIONS).rows
    for row in rows:
        own = [s.score("x", "auc") for s in subs if s.team == row.team]
        present = [v for v in own if not math.isnan(v)]
        assert row.scores.get("x", {}).get("auc") == (max(present) if present else None)
