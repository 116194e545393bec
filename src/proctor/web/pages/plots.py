"""The pages' plots as SVG drawn on the server: no script, no inline style (CSP holds).

Each plot is drawn from figures the service already cut to the viewer's disclosure (a board as
the viewer may read it, the team's own reports), never from anything else, and carries a text
alternative: a ``<title>``/``<desc>`` for screen readers and, on the page, the same numbers as
a table. Colours and strokes come from classes of ``proctor.css`` (``plot-*``).

A plot scales to its box (``viewBox``, width 100 %). Its axes read at a glance: the data's range
clipped to the metric's domain (an AUC axis never passes 1), ticks on 1-2-5 steps labelled with
just the digits the step needs, time ticks on round seconds, minutes, hours or days with labels
that never repeat. A team keeps one colour (``team_colour``: a stable hash of its name into a
colour-blind-safe palette) on every chart, for every viewer; the viewer's own marks are
outlined and larger, never recoloured.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape

from markupsafe import Markup

WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 12, 48
PALETTE_SIZE = 8
"""Colour classes plot-c0 .. plot-c7 of ``proctor.css`` (Okabe and Ito's colour-blind-safe set)."""

Formatter = Callable[[float], str]
Domain = tuple[float, float]
"""A metric's possible values (low, high); ``-inf``/``inf`` where unbounded."""
ANY_VALUE: Domain = (-math.inf, math.inf)
HOUR_S = 3600.0
"""A time axis around one moment spans an hour either side (not a tenth of the epoch)."""
MIN_SHARE_OF_DOMAIN = 0.05
"""A value axis spans at least this share of a bounded domain: 0.004 apart never fills it."""


@dataclass(frozen=True, slots=True)
class Point:
    """One mark: where (x, y) and what it is (label, shown on hover and in the text)."""

    x: float
    y: float
    label: str


@dataclass(frozen=True, slots=True)
class Axis:
    """An axis: its range (``low`` < ``high``) and its ticks with their labels, in order."""

    low: float
    high: float
    ticks: tuple[float, ...]
    labels: tuple[str, ...]

    def scale(self, out_lo: float, out_hi: float) -> Callable[[float], float]:
        """Maps a value of the axis onto ``out_lo`` .. ``out_hi`` (pixels)."""
        return _scale(self.low, self.high, out_lo, out_hi)


def team_colour(name: str) -> str:
    """The colour class of ``name``'s marks: the same on every chart, for every viewer.

    >>> team_colour("amber") == team_colour("amber")
    True
    """
    return f"plot-c{zlib.crc32(name.encode('utf-8')) % PALETTE_SIZE}"


def nice_step(span: float, count: int = 5) -> float:
    """The 1-2-5 step (1, 2 or 5 times a power of ten) that cuts ``span`` in about ``count``."""
    raw = span / max(count - 1, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1.0, 2.0, 5.0, 10.0) if m * power >= raw * 0.999)


def _finer(step: float) -> float:
    """The 1-2-5 step just below ``step``: 1 → 0.5, 2 → 1, 5 → 2."""
    power = 10.0 ** math.floor(math.log10(step) + 1e-9)
    return power / 2 if step / power < 1.5 else power if step / power < 3 else 2 * power


def _multiples(low: float, high: float, step: float) -> tuple[float, ...]:
    """The multiples of ``step`` from ``low`` to ``high``."""
    first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
    return tuple(n * step for n in range(first, last + 1))


def _decimals(step: float) -> int:
    """Digits after the point that tell ticks ``step`` apart."""
    return max(0, -math.floor(math.log10(step) + 1e-9))


AXIS_LIMIT = 1e300
"""Values beyond ±this sit at its end: the span of the axis stays a finite float."""


def value_axis(values: Sequence[float], domain: Domain = ANY_VALUE, count: int = 5) -> Axis:
    """An axis over ``values`` with a margin, inside ``domain``, with 1-2-5 ticks.

    The span is at least a twentieth of a bounded domain (a 0.004 gap stays small), one value
    alone gets a margin either side; nothing passes the domain's ends.
    """
    finite = [v for v in values if math.isfinite(v)] or [0.0]  # nan/inf have no place
    finite = [min(max(v, -AXIS_LIMIT), AXIS_LIMIT) for v in finite]  # spans stay finite
    lo, hi = min(finite), max(finite)
    lo_d, hi_d = min(domain[0], lo), max(domain[1], hi)  # a value outside stays on the axis
    span = (hi - lo) * 1.16
    if math.isfinite(hi_d - lo_d):
        span = max(span, (hi_d - lo_d) * MIN_SHARE_OF_DOMAIN)
    span = span or abs(lo) * 0.2 or 1.0
    middle = (lo + hi) / 2
    low, high = middle - span / 2, middle + span / 2
    if low < lo_d:
        low, high = lo_d, min(hi_d, lo_d + span)
    if high > hi_d:
        low, high = max(lo_d, hi_d - span), hi_d
    step = nice_step(high - low, count)
    while len(ticks := _multiples(low, high, step)) < 3:
        step = _finer(step)
    digits = _decimals(step)
    labels = tuple(f"{0.0 if abs(t) < step / 2 else t:.{digits}f}" for t in ticks)
    return Axis(low, high, ticks, labels)


TIME_STEPS_S = (
    *(1, 2, 5, 10, 15, 30),
    *(60 * m for m in (1, 2, 5, 10, 15, 30)),
    *(3600 * h for h in (1, 2, 3, 6, 12)),
    *(86400 * d for d in (1, 2, 7, 14, 28, 56, 91, 182, 364)),
)
"""Round steps of a time axis, in seconds: seconds, minutes, hours, days."""


def _time_shape(step: float, span: float) -> str:
    """The strftime shape that tells ticks ``step`` seconds apart, over ``span`` seconds."""
    if step >= 86400:
        return "%Y-%m-%d"
    if step >= 60:
        return "%H:%M" if span < 86400 else "%m-%d %H:%M"
    return "%H:%M:%S" if span < 86400 else "%m-%d %H:%M:%S"


def time_axis(moments: Sequence[float], count: int = 3) -> Axis:
    """A time axis (epoch seconds, UTC) over ``moments``: round steps, labels never repeated."""
    lo, hi = min(moments), max(moments)
    if hi - lo < 60:
        lo, hi = lo - 60, hi + 60
    pad = (hi - lo) * 0.06
    low, high = lo - pad, hi + pad
    step = float(next(s for s in reversed(TIME_STEPS_S) if (high - low) / s >= count - 1))
    while (high - low) / step > 2 * count:
        step *= 2
    ticks = tuple(float(t) for t in _multiples(low, high, step))
    shape = _time_shape(step, high - low)
    labels = tuple(datetime.fromtimestamp(t, UTC).strftime(shape) for t in ticks)
    return Axis(low, high, ticks, labels)


def _scale(lo: float, hi: float, out_lo: float, out_hi: float) -> Callable[[float], float]:
    span = hi - lo or 1.0
    return lambda v: out_lo + (v - lo) / span * (out_hi - out_lo)


def _svg(
    title: str, desc: str, body: list[str], height: int = HEIGHT, kind: str = "plot"
) -> Markup:
    ident = f"plot-{zlib.crc32((title + desc).encode('utf-8'))}"
    head = (
        f'<svg class="{kind}" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'preserveAspectRatio="xMidYMid meet" '
        f'aria-labelledby="{ident}-t {ident}-d" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{ident}-t">{escape(title)}</title><desc id="{ident}-d">{escape(desc)}</desc>'
    )
    return Markup(head + "".join(body) + "</svg>")  # noqa: S704 (every text is escaped)


def _y_axis(axis: Axis, y: Callable[[float], float]) -> list[str]:
    parts = []
    for tick, label in zip(axis.ticks, axis.labels, strict=True):
        at = y(tick)
        parts.append(
            f'<line class="plot-grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
            f'y1="{at:.1f}" y2="{at:.1f}"/>'
            f'<text class="plot-tick" x="{LEFT - 6}" y="{at + 4:.1f}" text-anchor="end">'
            f"{escape(label)}</text>"
        )
    return parts


def _x_ticks(axis: Axis, x: Callable[[float], float], y_text: float, left: float) -> list[str]:
    """Tick labels under an x axis (the end ones lean inwards, to stay inside the plot)."""
    parts = []
    for tick, label in zip(axis.ticks, axis.labels, strict=True):
        at = x(tick)
        anchor = "start" if at - left < 30 else "end" if WIDTH - RIGHT - at < 30 else "middle"
        parts.append(
            f'<text class="plot-tick" x="{at:.1f}" y="{y_text:.1f}" '
            f'text-anchor="{anchor}">{escape(label)}</text>'
        )
    return parts


def _dot(name: str, cx: float, cy: float, text: str, *, mine: bool) -> str:
    """A team's mark in its colour; the viewer's own outlined and larger."""
    css = team_colour(name) + (" plot-mine" if mine else "")
    return (
        f'<circle class="plot-dot {css}" cx="{cx:.1f}" cy="{cy:.1f}" r="{7 if mine else 5}">'
        f"<title>{escape(name)}: {escape(text)}</title></circle>"
    )


def time_series(
    series: dict[str, list[Point]],
    *,
    title: str,
    desc: str,
    domain: Domain = ANY_VALUE,
    highlight: str | None = None,
    steps: bool = True,
) -> Markup:
    """Lines (steps: a best-so-far) or dots over time, one team colour per series.

    ``x`` is epoch seconds; the ``highlight`` series is drawn outlined and last. The legend
    is the page's (``Chart.legend``), so its labels are never cut.
    """
    points = [p for ps in series.values() for p in ps]
    if not points:
        return Markup("")
    xs = time_axis([p.x for p in points])
    ys = value_axis([p.y for p in points], domain)
    plot_bottom = HEIGHT - BOTTOM
    x = xs.scale(LEFT, WIDTH - RIGHT)
    y = ys.scale(plot_bottom, TOP)
    body = _y_axis(ys, y)
    body.append(
        f'<line class="plot-axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
        f'y1="{plot_bottom}" y2="{plot_bottom}"/>'
    )
    body += _x_ticks(xs, x, plot_bottom + 20, LEFT)
    body.append(f'<text class="plot-tick" x="{LEFT}" y="{plot_bottom + 42}">time (UTC)</text>')
    for name in sorted(series, key=lambda n: (n == highlight, n)):
        marks = sorted(series[name], key=lambda p: p.x)
        mine = name == highlight
        css = team_colour(name) + (" plot-mine" if mine else "")
        if steps:  # a best-so-far holds until now, one mark alone too
            path = [f"M{x(marks[0].x):.1f},{y(marks[0].y):.1f}"]
            for mark in marks[1:]:
                path.append(f"H{x(mark.x):.1f}V{y(mark.y):.1f}")
            path.append(f"H{WIDTH - RIGHT}")
            body.append(f'<path class="plot-line {css}" d="{"".join(path)}"/>')
        body += [_dot(name, x(m.x), y(m.y), m.label, mine=mine) for m in marks]
    return _svg(title, desc, body, HEIGHT)


def strip(
    values: list[tuple[str, float]],
    *,
    title: str,
    desc: str,
    fmt: Formatter,
    domain: Domain = ANY_VALUE,
    highlight: str | None = None,
) -> Markup:
    """Every value as a dot on one axis, in its team's colour; ``highlight``'s outlined, named."""
    if not values:
        return Markup("")
    axis = value_axis([v for _, v in values], domain)
    x = axis.scale(LEFT, WIDTH - RIGHT)
    marks = sorted(values, key=lambda item: (item[0] == highlight, item[0]))
    seen: dict[int, int] = {}
    offsets = []
    for _, value in marks:  # dots too close to tell apart stack upwards
        slot = round(x(value) / 16)
        offsets.append(seen.get(slot, 0))
        seen[slot] = offsets[-1] + 1
    base = 40 + 14 * max(offsets)
    height = base + 48
    body = [
        f'<line class="plot-axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{base + 14}" '
        f'y2="{base + 14}"/>'
    ]
    body += _x_ticks(axis, x, base + 36, LEFT)
    for (name, value), offset in zip(marks, offsets, strict=True):
        cy = base - offset * 14
        mine = name == highlight
        body.append(_dot(name, x(value), cy, fmt(value), mine=mine))
        if mine:
            anchor = "start" if x(value) < 120 else "end" if x(value) > WIDTH - 120 else "middle"
            body.append(
                f'<text class="plot-label plot-callout" x="{x(value):.1f}" y="{cy - 14}" '
                f'text-anchor="{anchor}">{escape(name)}</text>'
            )
    return _svg(title, desc, body, height)


@dataclass(frozen=True, slots=True)
class Bounded:
    """A row of an interval plot: who, the value, its 95% interval and its number of cases."""

    name: str
    value: float
    low: float
    high: float
    cases: int | None = None


def intervals(
    rows: list[Bounded],
    *,
    title: str,
    desc: str,
    fmt: Formatter,
    domain: Domain = ANY_VALUE,
    highlight: str | None = None,
) -> Markup:
    """One row per entry: its value, and its interval where it has width, cases beside it."""
    if not rows:
        return Markup("")
    row_h = 26
    height = TOP + row_h * len(rows) + 30
    left, right = 190, WIDTH - RIGHT - 70
    axis = value_axis([b for r in rows for b in (r.low, r.high, r.value)], domain)
    x = axis.scale(left, right)
    body = []
    for tick, label in zip(axis.ticks, axis.labels, strict=True):
        body.append(
            f'<line class="plot-grid" x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{TOP}" '
            f'y2="{height - 26}"/><text class="plot-tick" x="{x(tick):.1f}" y="{height - 10}" '
            f'text-anchor="middle">{escape(label)}</text>'
        )
    for i, row in enumerate(rows):
        cy = TOP + row_h * i + row_h / 2
        mine = row.name == highlight
        css = team_colour(row.name) + (" plot-mine" if mine else "")
        name = row.name if len(row.name) <= 16 else row.name[:15] + "…"  # whole in the table
        body.append(
            f'<text class="plot-label" x="{left - 8}" y="{cy + 4:.1f}" text-anchor="end">'
            f"<title>{escape(row.name)}</title>{escape(name)}</text>"
        )
        if row.high > row.low:
            body.append(
                f'<line class="plot-line {css}" x1="{x(row.low):.1f}" x2="{x(row.high):.1f}" '
                f'y1="{cy:.1f}" y2="{cy:.1f}"/>'
            )
        text = f"{fmt(row.value)} [{fmt(row.low)}, {fmt(row.high)}]"
        body.append(_dot(row.name, x(row.value), cy, text, mine=mine))
        if row.cases is not None:
            body.append(
                f'<text class="plot-tick" x="{WIDTH - RIGHT}" y="{cy + 4:.1f}" '
                f'text-anchor="end">n={row.cases}</text>'
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
    return _svg(title, desc, body, height, "plot plot-heat")
