"""How numbers and outcomes read on the pages: digits per metric, direction, stage outcomes.

A count (a metric of direction ``neutral``, or a whole number the report marks as one) shows
as an integer; any other metric with the digits ``precision:`` declares for it in
``challenge.yaml`` (4 when it declares none). A stage whose cases all failed is never called
``passed``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from proctor.spec import Challenge
from proctor.spec.display import DEFAULT_PRECISION
from proctor.types import Direction

DASH = "–"


@dataclass(frozen=True, slots=True)
class Numbers:
    """Formats a challenge's figures (``None`` challenge: 4 digits, no direction known)."""

    challenge: Challenge | None

    def digits(self, metric: str) -> int | None:
        """Digits after the point for ``metric``; None: an integer."""
        if self.challenge is None:
            return DEFAULT_PRECISION
        return self.challenge.digits(metric)

    def fmt(self, metric: str, value: Any) -> str:
        """``value`` of ``metric`` as the pages show it ('–' for none or not a number)."""
        if value is None or isinstance(value, bool):
            return DASH
        if not isinstance(value, int | float):
            return str(value)
        if isinstance(value, float) and not math.isfinite(value):
            return DASH
        digits = self.digits(metric)
        if digits is None or isinstance(value, int):
            return f"{round(value):d}"
        return f"{value:.{digits}f}"

    def change(self, metric: str, old: Any, new: Any) -> tuple[str, str]:
        """``old`` and ``new`` as shown; more digits where the precision would hide a change."""
        before, after = self.fmt(metric, old), self.fmt(metric, new)
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (old, new))
        if before == after and old != new and numbers:
            return f"{old:.12g}", f"{new:.12g}"
        return before, after

    def direction(self, metric: str) -> Direction | None:
        """Which way ``metric`` improves (None: unknown to the challenge's scorers)."""
        if self.challenge is None:
            return None
        for task in self.challenge.tasks:
            if metric in task.reported_metrics:
                return task.scorer_declaration.metric(metric).direction
        return None

    def family_direction(self, name: str) -> Direction | None:
        """The direction shared by the metrics named ``NAME_*`` (None: none, or they disagree).

        A dashboard's ``DICE`` column stands for ``dice_liver``, ``dice_spleen``...
        """
        if self.challenge is None:
            return None
        prefix = f"{name.lower()}_"
        found = {
            task.scorer_declaration.metric(metric).direction
            for task in self.challenge.tasks
            for metric in task.reported_metrics
            if metric.startswith(prefix)
        }
        return found.pop() if len(found) == 1 else None

    def better(self, metric: str) -> str:
        """'higher is better', 'lower is better', 'a count' or '' (unknown)."""
        direction = self.direction(metric)
        if direction is None:
            return ""
        if direction is Direction.NEUTRAL:
            return "a count"
        return "higher is better" if direction.higher_is_better else "lower is better"

    def arrow(self, metric: str) -> str:
        """↑ when higher is better, ↓ when lower is, nothing otherwise."""
        direction = self.direction(metric)
        if direction is None or direction is Direction.NEUTRAL:
            return ""
        return "↑" if direction.higher_is_better else "↓"


def stage_outcome(stage: dict[str, Any]) -> str:
    """A stage's outcome in words: its status, unless its cases say otherwise.

    A stage that ran cases and none passed reads ``all N cases failed``; some failed:
    ``P of N cases passed``; all passed: ``passed``.
    """
    status = str(stage.get("status", ""))
    cases = stage.get("cases") or {}
    total = int(cases.get("total") or 0)
    if status != "passed" or total == 0 or outcomes_hidden(cases):
        return status
    passed = int(cases.get("passed") or 0)
    if passed == 0:
        return f"all {total} cases failed"
    if passed < total:
        return f"{passed} of {total} cases passed"
    return "passed"


def outcomes_hidden(cases: dict[str, Any]) -> bool:
    """True when the stage's case outcomes were withheld (disclosure ``none``: total only).

    A stage that ran cases always counts each as passed, failed or timed out (a case never
    started counts as failed), so a total with no outcome at all is a redacted one.
    """
    total = int(cases.get("total") or 0)
    outcomes = sum(int(cases.get(key) or 0) for key in ("passed", "failed", "timed_out"))
    return total > 0 and outcomes == 0


def case_summary(cases: dict[str, Any] | None) -> str:
    """A stage's cases in a few words ('' without cases).

    ``8/8 passed``, ``0/8 passed, 8 failed, 1 timed out``, or ``8 cases (outcomes not
    disclosed)`` where the disclosure kept only the total.
    """
    if not cases or not cases.get("total"):
        return ""
    if outcomes_hidden(cases):
        return f"{cases['total']} cases (outcomes not disclosed)"
    text = f"{cases['passed']}/{cases['total']} passed"
    if cases.get("failed"):
        text += f", {cases['failed']} failed"
    if cases.get("timed_out"):
        text += f", {cases['timed_out']} timed out"
    return text
