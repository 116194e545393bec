"""The plots' axes and colours: nice ticks inside the metric's domain, distinct labels, one
colour per team whoever looks (``proctor.web.pages.plots``)."""

from __future__ import annotations

import math
import re

from hypothesis import example, given
from hypothesis import strategies as st

from proctor.web.pages import plots

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(lambda v: round(v, 6))
share = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
moment = st.floats(min_value=1.5e9, max_value=2.0e9, allow_nan=False)


def is_nice(step: float) -> bool:
    """1, 2 or 5 times a power of ten."""
    mantissa = step / 10 ** math.floor(math.log10(step))
    return any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 5, 10))


@given(st.lists(finite, min_size=1, max_size=20))
def test_ticks_are_nice_distinct_and_on_the_axis(values: list[float]) -> None:
    axis = plots.value_axis(values)
    assert axis.low < axis.high
    assert axis.low <= min(values) and max(values) <= axis.high
    assert 2 <= len(axis.ticks) <= 11
    steps = [b - a for a, b in zip(axis.ticks, axis.ticks[1:], strict=False)]
    assert all(is_nice(step) for step in steps)
    assert max(steps) - min(steps) <= 1e-9 * max(steps)
    assert all(axis.low - 1e-9 <= t <= axis.high + 1e-9 for t in axis.ticks)
    assert len(set(axis.labels)) == len(axis.labels)


@given(st.lists(share, min_size=1, max_size=20))
def test_an_axis_of_shares_never_leaves_zero_to_one(values: list[float]) -> None:
    axis = plots.value_axis(values, (0.0, 1.0))
    assert 0.0 <= axis.low < axis.high <= 1.0
    assert all(0.0 <= t <= 1.0 for t in axis.ticks)


def test_one_auc_alone_gets_an_axis_that_stops_at_one() -> None:
    axis = plots.value_axis([0.98], (0.0, 1.0))
    assert axis.high == 1.0
    assert axis.labels[-1] == "1.00"


def test_a_small_difference_does_not_fill_a_bounded_axis() -> None:
    axis = plots.value_axis([0.839, 0.843], (0.0, 1.0))
    assert axis.high - axis.low >= 0.05  # 0.004 apart stays a small gap
    assert axis.labels == ("0.82", "0.84", "0.86")


@given(st.lists(moment, min_size=1, max_size=20))
def test_time_labels_never_repeat(moments: list[float]) -> None:
    axis = plots.time_axis(moments)
    assert len(axis.ticks) >= 2
    assert len(set(axis.labels)) == len(axis.labels)
    assert axis.low <= min(moments) and max(moments) <= axis.high


def test_three_moments_a_second_apart_read_as_distinct_seconds() -> None:
    axis = plots.time_axis([1_700_000_000.0, 1_700_000_001.0, 1_700_000_002.0])
    assert all(re.fullmatch(r"\d\d:\d\d(:\d\d)?", label) for label in axis.labels)
    assert len(set(axis.labels)) == len(axis.labels)


@given(st.text(min_size=1, max_size=40))
def test_a_team_has_one_colour_of_the_palette(name: str) -> None:
    colour = plots.team_colour(name)
    assert colour == plots.team_colour(name)
    assert re.fullmatch(rf"plot-c[0-{plots.PALETTE_SIZE - 1}]", colour)


def test_the_viewer_is_outlined_not_recoloured() -> None:
    svg = plots.strip(
        [("amber", 0.8), ("blue", 0.6)], title="t", desc="d", fmt=str, highlight="amber"
    )
    amber = plots.team_colour("amber")
    assert f'class="plot-dot {amber} plot-mine"' in svg
    assert f'class="plot-dot {plots.team_colour("blue")}"' in svg


def test_an_interval_without_width_is_not_drawn() -> None:
    rows = [plots.Bounded("amber", 0.839, 0.839, 0.839, 3), plots.Bounded("blue", 0.7, 0.6, 0.8)]
    svg = plots.intervals(rows, title="t", desc="d", fmt="{:.3f}".format)
    assert svg.count('<line class="plot-line') == 1
    assert "n=3" in svg


def test_a_dozen_equal_scores_stack_inside_the_strip() -> None:
    values = [(f"team{n}", 0.5) for n in range(12)]
    svg = plots.strip(values, title="t", desc="d", fmt=str, highlight="team3")
    height = float(re.search(r'viewBox="0 0 \d+ (\d+)"', svg)[1])  # type: ignore[index]
    tops = [float(cy) - 10 for cy in re.findall(r'cy="([\d.-]+)"', svg)]
    assert len(tops) == 12
    assert all(top >= 0 and top + 20 <= height for top in tops)


@given(st.lists(st.floats(), min_size=1, max_size=5))
@example([-1.7e308, 1.7e308])  # a span past the largest float
def test_any_float_gets_an_axis_never_an_error(values: list[float]) -> None:
    axis = plots.value_axis(values, (0.0, 1.0))
    assert axis.low < axis.high
    assert len(axis.ticks) >= 2
