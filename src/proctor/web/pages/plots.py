"""The pages' plots as SVG drawn on the server: no script, no inline style (CSP holds).

Each plot is drawn from figures the service already cut to the viewer's disclosure (a board as
the viewer may read it, the team's own reports), never from anything else, and carries a text
alternative: a ``<title>``/``<desc>`` for screen readers and, on the page, the same numbers as
a table. Colours and strokes come from classes of ``proctor.css`` (``plot-*``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape

from markupsafe import Markup

WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 12, 40
SERIES_CLASSES = 8
"""Colour classes plot-s0 .. plot-s7, reused in turn."""

Formatter = Callable[[float], str]
HOUR_S = 3600.0
"""A time axis around one moment spans an hour either side (not a tenth of the epoch)."""


@dataclass(frozen=True, slots=True)
class Point:
    """One mark: where (x, y) and what it is (label, shown on hover and in the text)."""

    x: float
    y: float
    label: str


def _scale(lo: float, hi: float, out_lo: float, out_hi: float) -> Callable[[float], float]:
    span = hi - lo or 1.0
    return lambda v: out_lo + (v - lo) / span * (out_hi - out_lo)


def _bounds(values: Sequence[float], *, alone: float | None = None) -> tuple[float, float]:
    """The axis range of ``values`` with a margin.

    One value alone gets ``alone`` either side (None: a tenth of the value).
    """
    lo, hi = min(values), max(values)
    if lo == hi:
        pad = alone if alone is not None else abs(lo) * 0.1 or 1.0
        return lo - pad, hi + pad
    pad = (hi - lo) * 0.08
    return lo - pad, hi + pad


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    step = (hi - lo) / max(count - 1, 1)
    return [lo + i * step for i in range(count)]


def _svg(title: str, desc: str, body: list[str], height: int = HEIGHT) -> Markup:
    ident = f"plot-{abs(hash((title, desc))) % 10**8}"
    head = (
        f'<svg class="plot" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-labelledby="{ident}-t {ident}-d" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{ident}-t">{escape(title)}</title><desc id="{ident}-d">{escape(desc)}</desc>'
    )
    return Markup(head + "".join(body) + "</svg>")  # noqa: S704 (every text is escaped)


def _y_axis(lo: float, hi: float, y: Callable[[float], float], fmt: Formatter) -> list[str]:
    parts = []
    for tick in _ticks(lo, hi):
        at = y(tick)
        parts.append(
            f'<line class="plot-grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
            f'y1="{at:.1f}" y2="{at:.1f}"/>'
            f'<text class="plot-tick" x="{LEFT - 6}" y="{at + 4:.1f}" text-anchor="end">'
            f"{escape(fmt(tick))}</text>"
        )
    return parts


def _time_axis(lo: float, hi: float, x: Callable[[float], float], height: int) -> list[str]:
    parts = [
        f'<line class="plot-axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
        f'y1="{height - BOTTOM}" y2="{height - BOTTOM}"/>'
    ]
    span = hi - lo
    shape = "%H:%M:%S" if span < 3600 else "%m-%d %H:%M" if span < 5 * 86400 else "%Y-%m-%d"
    ticks = _ticks(lo, hi, 4)
    for n, tick in enumerate(ticks):
        label = datetime.fromtimestamp(tick, UTC).strftime(shape)
        parts.append(
            f'<text class="plot-tick" x="{x(tick):.1f}" y="{height - BOTTOM + 16}" '
            f'text-anchor="{_anchor(n, len(ticks))}">{escape(label)}</text>'
        )
    parts.append(
        f'<text class="plot-tick" x="{WIDTH - RIGHT}" y="{height - BOTTOM + 30}" '
        'text-anchor="end">UTC</text>'
    )
    return parts


def _anchor(n: int, count: int) -> str:
    """Ticks at the ends of an axis lean inwards, so their labels stay inside the plot."""
    return "start" if n == 0 else "end" if n == count - 1 else "middle"


def time_series(
    series: dict[str, list[Point]],
    *,
    title: str,
    desc: str,
    fmt: Formatter,
    highlight: str | None = None,
    steps: bool = True,
) -> Markup:
    """Lines (steps: a best-so-far) or dots over time, one colour per series, and a legend.

    ``x`` is epoch seconds; the ``highlight`` series is drawn thicker and last.
    """
    points = [p for ps in series.values() for p in ps]
    if not points:
        return Markup("")
    x_lo, x_hi = _bounds([p.x for p in points], alone=HOUR_S)
    y_lo, y_hi = _bounds([p.y for p in points])
    legend_rows = math.ceil(len(series) / 4)
    height = HEIGHT + 18 * legend_rows
    plot_bottom = HEIGHT - BOTTOM
    x = _scale(x_lo, x_hi, LEFT, WIDTH - RIGHT)
    y = _scale(y_lo, y_hi, plot_bottom, TOP)
    body = _y_axis(y_lo, y_hi, y, fmt) + _time_axis(x_lo, x_hi, x, HEIGHT)
    names = sorted(series, key=lambda n: n == highlight)
    colours = {name: f"plot-s{i % SERIES_CLASSES}" for i, name in enumerate(sorted(series))}
    for name in names:
        marks = sorted(series[name], key=lambda p: p.x)
        css = colours[name] + (" plot-mine" if name == highlight else "")
        if steps and len(marks) > 1:
            path = [f"M{x(marks[0].x):.1f},{y(marks[0].y):.1f}"]
            for mark in marks[1:]:
                path.append(f"H{x(mark.x):.1f}V{y(mark.y):.1f}")
            path.append(f"H{WIDTH - RIGHT}")
            body.append(f'<path class="plot-line {css}" d="{"".join(path)}"/>')
        for mark in marks:
            body.append(
                f'<circle class="plot-dot {css}" cx="{x(mark.x):.1f}" cy="{y(mark.y):.1f}" r="4">'
                f"<title>{escape(name)}: {escape(mark.label)}</title></circle>"
            )
    for i, name in enumerate(sorted(series)):
        mine = " plot-mine" if name == highlight else ""
        lx = LEFT + (i % 4) * 140
        ly = HEIGHT + 4 + 18 * (i // 4)
        body.append(
            f'<rect class="plot-key {colours[name]}{mine}" x="{lx}" y="{ly}" width="12" '
            'height="12"/>'
            f'<text class="plot-label" x="{lx + 16}" y="{ly + 10}">{escape(name[:18])}</text>'
        )
    return _svg(title, desc, body, height)


def strip(
    values: list[tuple[str, float]],
    *,
    title: str,
    desc: str,
    fmt: Formatter,
    highlight: str | None = None,
) -> Markup:
    """Every value as a dot on one axis (a distribution), the ``highlight`` one marked."""
    if not values:
        return Markup("")
    height = 120
    lo, hi = _bounds([v for _, v in values])
    x = _scale(lo, hi, LEFT, WIDTH - RIGHT)
    middle = 50
    body = [
        f'<line class="plot-axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{middle + 24}" '
        f'y2="{middle + 24}"/>'
    ]
    ticks = _ticks(lo, hi)
    for n, tick in enumerate(ticks):
        body.append(
            f'<text class="plot-tick" x="{x(tick):.1f}" y="{middle + 42}" '
            f'text-anchor="{_anchor(n, len(ticks))}">{escape(fmt(tick))}</text>'
        )
    seen: dict[int, int] = {}
    for name, value in sorted(values, key=lambda item: item[0] == highlight):
        slot = round(x(value) / 8)
        offset = seen.get(slot, 0)
        seen[slot] = offset + 1
        cy = middle + 12 - offset * 9
        css = "plot-dot plot-mine" if name == highlight else "plot-dot plot-s0"
        body.append(
            f'<circle class="{css}" cx="{x(value):.1f}" cy="{cy}" r="5">'
            f"<title>{escape(name)}: {escape(fmt(value))}</title></circle>"
        )
        if name == highlight:
            body.append(
                f'<text class="plot-label plot-callout" x="{x(value):.1f}" y="{cy - 10}" '
                f'text-anchor="middle">{escape(name[:18])}</text>'
            )
    return _svg(title, desc, body, height)


def intervals(
    rows: list[tuple[str, float, float, float]],
    *,
    title: str,
    desc: str,
    fmt: Formatter,
    highlight: str | None = None,
) -> Markup:
    """One row per (name, value, low, high): the value and its interval, ``highlight`` marked."""
    if not rows:
        return Markup("")
    row_h = 26
    height = TOP + row_h * len(rows) + 30
    left = 150
    lo, hi = _bounds([b for _, _, lo_, hi_ in rows for b in (lo_, hi_)])
    x = _scale(lo, hi, left, WIDTH - RIGHT)
    body = []
    ticks = _ticks(lo, hi)
    for n, tick in enumerate(ticks):
        body.append(
            f'<line class="plot-grid" x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{TOP}" '
            f'y2="{height - 26}"/><text class="plot-tick" x="{x(tick):.1f}" y="{height - 10}" '
            f'text-anchor="{_anchor(n, len(ticks))}">{escape(fmt(tick))}</text>'
        )
    for i, (name, value, low, high) in enumerate(rows):
        cy = TOP + row_h * i + row_h / 2
        css = "plot-mine" if name == highlight else "plot-s0"
        body.append(
            f'<text class="plot-label" x="{left - 8}" y="{cy + 4:.1f}" text-anchor="end">'
            f"{escape(name[:22])}</text>"
            f'<line class="plot-line {css}" x1="{x(low):.1f}" x2="{x(high):.1f}" '
            f'y1="{cy:.1f}" y2="{cy:.1f}"/>'
            f'<circle class="plot-dot {css}" cx="{x(value):.1f}" cy="{cy:.1f}" r="5">'
            f"<title>{escape(name)}: {escape(fmt(value))} "
            f"[{escape(fmt(low))}, {escape(fmt(high))}]</title></circle>"
        )
    return _svg(title, desc, body, int(height))


def heat_map(
    rows: list[str],
    columns: list[str],
    cell: Callable[[str, str], float | None],
    *,
    title: str,
    desc: str,
    fmt: Callable[[str, float], str],
    higher_better: Callable[[str], bool | None],
) -> Markup:
    """A grid rows × columns; each column shaded from its worst (light) to its best (dark)."""
    if not rows or not columns:
        return Markup("")
    left, cell_w, cell_h, head = 150, min(110, (WIDTH - 150 - RIGHT) // len(columns)), 24, 28
    height = head + cell_h * len(rows) + 8
    body = []
    for j, column in enumerate(columns):
        body.append(
            f'<text class="plot-label" x="{left + cell_w * j + cell_w / 2:.1f}" y="{head - 10}" '
            f'text-anchor="middle">{escape(column[:14])}</text>'
        )
        values = [v for r in rows if (v := cell(r, column)) is not None and math.isfinite(v)]
        lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
        better = higher_better(column)
        for i, row in enumerate(rows):
            value = cell(row, column)
            shade = "plot-heat-none"
            text = "–"
            if value is not None and math.isfinite(value):
                share = 0.5 if hi == lo else (value - lo) / (hi - lo)
                if better is False:
                    share = 1 - share
                shade = f"plot-heat-{min(4, int(share * 5))}"
                text = fmt(column, value)
            x0, y0 = left + cell_w * j, head + cell_h * i
            body.append(
                f'<rect class="{shade}" x="{x0}" y="{y0}" width="{cell_w - 2}" '
                f'height="{cell_h - 2}"><title>{escape(row)} {escape(column)}: {escape(text)}'
                f'</title></rect><text class="plot-cell" x="{x0 + cell_w / 2 - 1:.1f}" '
                f'y="{y0 + 16}" text-anchor="middle">{escape(text)}</text>'
            )
    for i, row in enumerate(rows):
        body.append(
            f'<text class="plot-label" x="{left - 8}" y="{head + cell_h * i + 16}" '
            f'text-anchor="end">{escape(row[:22])}</text>'
        )
    return _svg(title, desc, body, height)
