"""Ranking entries into leaderboards (aggregation and publication rules)."""

from proctor.leaderboard.table import Standing, build_leaderboard

__all__ = ["Standing", "build_leaderboard"]
