"""How numbers and outcomes read on the pages: digits per metric, direction, stage outcomes.

A count (a metric its scorer declares one, ``MetricDeclaration.count``) shows
as an integer; any other metric with the digits ``precision:`` declares for it in
``challenge.yaml`` (4 when it declares none). A stage whose cases all failed is never called
``passed``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from proctor.services.platform.vocabulary import DEFAULT_PRECISION, Challenge, MetricDeclaration
from proctor.types import Direction
from proctor.wording import plural

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

    def declared(self, metric: str) -> MetricDeclaration | None:
        """The declaration of ``metric`` (None: unknown to the challenge's scorers)."""
        if self.challenge is None:
            return None
        for task in self.challenge.tasks:
            if metric in task.reported_metrics:
                return task.scorer_declaration.metric(metric)
        return None

    def cases_metrics(self) -> dict[str, str]:
        """Task → the count metric saying how many cases its scores stand on (``records``)."""
        if self.challenge is None:
            return {}
        return {
            task.name: task.scorer_declaration.cases
            for task in self.challenge.tasks
            if task.scorer_declaration.cases
        }

    def direction(self, metric: str) -> Direction | None:
        """Which way ``metric`` improves (None: unknown to the challenge's scorers)."""
        declared = self.declared(metric)
        return declared.direction if declared is not None else None

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
        declared = self.declared(metric)
        if declared is None or declared.direction is Direction.NEUTRAL:
            return "a count" if declared is not None and declared.count else ""
        direction = declared.direction
        return "higher is better" if direction.higher_is_better else "lower is better"

    def arrow(self, metric: str) -> str:
        """↑ when higher is better, ↓ when lower is, nothing otherwise."""
        direction = self.direction(metric)
        if direction is None or direction is Direction.NEUTRAL:
            return ""
        return "↑" if direction.higher_is_better else "↓"


def stage_outcome(stage: dict[str, Any]) -> str:
    """A stage's outcome in words: its status, unless its cases say otherwise.

    A stage that ran cases and none passed reads ``all N cases failed`` (one case: ``its one
    case failed``); some failed:
    ``P of N cases passed``; all passed: ``passed``.
    """
    status = str(stage.get("status", ""))
    cases = stage.get("cases") or {}
    total = int(cases.get("total") or 0)
    if status != "passed" or total == 0 or outcomes_hidden(cases):
        return status
    passed = int(cases.get("passed") or 0)
    if passed == 0:
        return "its one case failed" if total == 1 else f"all {total} cases failed"
    if passed < total:
        return f"{passed} of {plural(total, 'case')} passed"
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
        return f"{plural(int(cases['total']), 'case')} (outcomes not disclosed)"
    text = f"{cases['passed']}/{cases['total']} passed"
    if cases.get("failed"):
        text += f", {cases['failed']} failed"
    if cases.get("timed_out"):
        text += f", {cases['timed_out']} timed out"
    return text


OWNERS = {
    "entry": "your entry",
    "scorer": "the organizers' scoring program",
    "platform": "the platform",
    "infrastructure": "the platform",
}
"""Whose fault a failure was, in the banner's words (``Failure`` values)."""

_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b.*$")


@dataclass(frozen=True, slots=True)
class Banner:
    """A failed submission's first words: whose failure, in which stage, its telling line."""

    owner: str
    stage: str
    line: str


def failure_banner(report: dict[str, Any], failure: str | None) -> Banner | None:
    """The banner of a failed report (None: it did not fail).

    ``line`` is the last ``XxxError: ...`` line of the failed stage's message (a Python
    traceback's verdict), else the message's first line.
    """
    if report.get("status") != "failed":
        return None
    stage = str(report.get("failed_stage") or "")
    failed = [s for s in report.get("stages") or () if s.get("name") == stage]
    message = str(failed[0].get("message") or "") if failed else ""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    verdicts = [line for line in lines if _ERROR_LINE.match(line)]
    line = verdicts[-1] if verdicts else lines[0] if lines else str(report.get("message") or "")
    return Banner(OWNERS.get(failure or "", "the evaluation"), stage, line)


def repeated_messages(stages: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each distinct stage message once: first stage's name → every stage that printed it.

    A failure repeated on several tasks (the same traceback per task) is shown once, with
    the tasks it hit.
    """
    first: dict[str, str] = {}
    grouped: dict[str, list[str]] = {}
    for stage in stages:
        message = str(stage.get("message") or "")
        if not message:
            continue
        name = str(stage.get("name"))
        owner = first.setdefault(message, name)
        grouped.setdefault(owner, []).append(name)
    return grouped


INTERVAL_SUFFIXES = ("_ci95_low", "_ci95_high")
"""A scorer's 95% bootstrap bounds of metric M come as ``M_ci95_low`` and ``M_ci95_high``."""


@dataclass(frozen=True, slots=True)
class ShownInterval:
    """A 95% interval beside its metric: its bounds and the cases it stands on (None: unknown)."""

    low: Any
    high: Any
    cases: int | None = None


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """One metric across the tasks: each task's value and interval (None: not reported)."""

    metric: str
    values: tuple[Any, ...]
    intervals: tuple[ShownInterval | None, ...]


def score_grid(
    scores: dict[str, dict[str, Any]], cases: dict[str, str] | None = None
) -> tuple[list[str], list[ScoreRow]]:
    """The scores as a metric × task table: the tasks, then one row per metric.

    Interval bounds are no rows of their own: each sits beside its metric's value, with the
    number of cases its task's scorer reports (``cases``: task → its count metric). An
    interval without width (``[0.839, 0.839]``) tells nothing and is left out.
    """
    tasks = list(scores)
    metrics = dict.fromkeys(
        m for values in scores.values() for m in values if not m.endswith(INTERVAL_SUFFIXES)
    )
    counted = cases or {}
    rows = []
    for metric in metrics:
        values = tuple(scores[task].get(metric) for task in tasks)
        intervals = tuple(_interval(scores[task], metric, counted.get(task, "")) for task in tasks)
        rows.append(ScoreRow(metric, values, intervals))
    return tasks, rows


def _interval(values: dict[str, Any], metric: str, cases: str) -> ShownInterval | None:
    low, high = (values.get(f"{metric}{suffix}") for suffix in INTERVAL_SUFFIXES)
    if not isinstance(low, int | float) or not isinstance(high, int | float) or not high > low:
        return None
    count = values.get(cases) if cases else None
    return ShownInterval(low, high, int(count) if isinstance(count, int | float) else None)
