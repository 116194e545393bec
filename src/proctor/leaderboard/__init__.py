"""Ranking entries into leaderboards (aggregation and publication rules).

``build_leaderboard`` ranks a plain entry → task → score table (the demo). The declared boards
of a phase (``spec.leaderboards``) are computed by ``compute_board`` from ``ScoredSubmission``
objects (``compute_phase_board`` also finds the board and the directions) and exported by
``board_to_json`` / ``board_to_csv``.
"""

from proctor.leaderboard.boards import compute_board, compute_phase_board
from proctor.leaderboard.export import (
    board_from_dict,
    board_to_csv,
    board_to_dict,
    board_to_json,
    rows_from_csv,
)
from proctor.leaderboard.ladder import climb
from proctor.leaderboard.model import (
    Board,
    BoardInputError,
    BoardRow,
    Interval,
    RowIntervals,
    ScoredSubmission,
)
from proctor.leaderboard.table import Standing, build_leaderboard

__all__ = [
    "Board",
    "BoardInputError",
    "BoardRow",
    "Interval",
    "RowIntervals",
    "ScoredSubmission",
    "Standing",
    "board_from_dict",
    "board_to_csv",
    "board_to_dict",
    "board_to_json",
    "build_leaderboard",
    "climb",
    "compute_board",
    "compute_phase_board",
    "rows_from_csv",
]
