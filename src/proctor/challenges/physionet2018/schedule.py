"""Random but seeded scenarios of one synthetic night: 30 s sleep stages and annotated events.

A scenario is what a sleep technologist would have annotated: stage marks every 30 s and
non-overlapping regions (arousals, apneas, hypopneas). Events only happen while asleep, so a
wake period holds none. The waveforms are synthesized from the scenario (``signals.py``) and
the labels are derived from its annotations (``labels.py``), never from the waveforms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from proctor.challenges.physionet2018.labels import SLEEP_STAGES, Region
from proctor.challenges.physionet2018.night import (
    NIGHT_MIN_S,
    draw_night_events,
    draw_night_stages,
)

EPOCH_S = 30
"""Length of one sleep-staging epoch, seconds (AASM)."""

FIRST_STAGES = ("W", "N1", "N2")
FIRST_WEIGHTS = (0.2, 0.35, 0.45)
NEXT_STAGES = ("N1", "N2", "N3", "R", "W")
NEXT_WEIGHTS = (0.1, 0.37, 0.2, 0.2, 0.13)

EVENT_KINDS = (
    "arousal_rera",
    "arousal_spontaneous",
    "arousal_plm",
    "arousal_bruxism",
    "resp_hypopnea",
    "resp_obstructiveapnea",
    "resp_centralapnea",
)
EVENT_WEIGHTS = (0.32, 0.32, 0.13, 0.08, 0.08, 0.05, 0.02)
DURATION_S = {
    "arousal_rera": (4.0, 12.0),
    "arousal_spontaneous": (3.0, 12.0),
    "arousal_plm": (3.0, 8.0),
    "arousal_bruxism": (3.0, 8.0),
    "resp_hypopnea": (10.0, 18.0),
    "resp_obstructiveapnea": (10.0, 18.0),
    "resp_centralapnea": (10.0, 15.0),
}
"""Uniform range of each event kind's duration, seconds."""
GAP_S = (10.0, 30.0)
"""Uniform range of the pause between two events, seconds."""
LEAD_IN_S = (1.0, 10.0)
"""Uniform range of the unstaged start before the first stage mark, seconds. Besides realism
(staging starts at the first epoch after lights out), this keeps every mark off sample 0,
where wfdb-python's ``rdann`` takes comment annotations for file definitions and drops them."""
EDGE_S = 3.0
"""No event starts before, or ends within, this many seconds of the record's edges."""


@dataclass(frozen=True)
class Scenario:
    """One record's ground truth: length and rate, stage marks, events (sample indices)."""

    length: int
    fs: int
    stages: tuple[tuple[int, str], ...]
    events: tuple[Region, ...]

    def stage_at(self) -> np.ndarray:
        """The stage name of every sample (``'N2'``); the first stage also covers the lead-in."""
        out = np.full(self.length, self.stages[0][1], dtype="<U2")
        bounds = [s for s, _ in self.stages[1:]] + [self.length]
        for (start, stage), stop in zip(self.stages, bounds, strict=True):
            out[start:stop] = stage
        return out

    def annotations(self) -> tuple[list[int], list[str]]:
        """The `.arousal` marks, sorted by sample: stages first at a tie, then opens, closes."""
        marks: list[tuple[int, int, str]] = [(s, 0, stage) for s, stage in self.stages]
        for event in self.events:
            marks.append((event.start, 1, f"({event.kind}"))
            marks.append((event.end, 2, f"{event.kind})"))
        marks.sort(key=lambda m: (m[0], m[1]))
        return [m[0] for m in marks], [m[2] for m in marks]


def draw_scenario(rng: np.random.Generator, *, length: int, fs: int) -> Scenario:
    """Draw stage marks and events for a record of ``length`` samples at ``fs`` Hz.

    A record of ``night.NIGHT_MIN_S`` or more is a whole night at the published rates (wake
    periods, RERAs, apneas, hypopneas: ``night``); a shorter one (the bundled records, a
    minute each) is a dense sampler of the same event kinds, so that every short record has
    targets and exclusions to learn from.
    """
    if length >= NIGHT_MIN_S * fs:
        return _draw_night(rng, length=length, fs=fs)
    stages = _draw_stages(rng, length=length, fs=fs)
    scenario = Scenario(length, fs, stages, ())
    return Scenario(length, fs, stages, _draw_events(rng, scenario))


def _draw_night(rng: np.random.Generator, *, length: int, fs: int) -> Scenario:
    first = round(rng.uniform(*LEAD_IN_S) * fs)
    stages = draw_night_stages(rng, length=length, fs=fs, first=first, epoch=EPOCH_S * fs)
    scenario = Scenario(length, fs, stages, ())
    asleep = np.isin(scenario.stage_at(), sorted(SLEEP_STAGES))
    events = draw_night_events(rng, asleep, fs=fs, edge=round(EDGE_S * fs))
    return Scenario(length, fs, stages, events)


def _draw_stages(rng: np.random.Generator, *, length: int, fs: int) -> tuple[tuple[int, str], ...]:
    epoch = EPOCH_S * fs
    first = round(rng.uniform(*LEAD_IN_S) * fs)
    stages = [(first, str(rng.choice(FIRST_STAGES, p=FIRST_WEIGHTS)))]
    for start in range(first + epoch, length, epoch):
        stage = str(rng.choice(NEXT_STAGES, p=NEXT_WEIGHTS))
        if stage == "W" and stages[-1][1] == "W":
            stage = "N1"  # fall asleep again, so that a later W can be a wake-up
        stages.append((start, stage))
    return tuple(stages)


def _draw_events(rng: np.random.Generator, scenario: Scenario) -> tuple[Region, ...]:
    fs = scenario.fs
    asleep = np.isin(scenario.stage_at(), sorted(SLEEP_STAGES))
    last = scenario.length - round(EDGE_S * fs)
    events: list[Region] = []
    t = round(rng.uniform(EDGE_S, 10.0) * fs)
    while True:
        kind = str(rng.choice(EVENT_KINDS, p=EVENT_WEIGHTS))
        low, high = DURATION_S[kind]
        end = t + round(rng.uniform(low, high) * fs)
        if end > last:
            break
        if asleep[t : end + 1].all():
            events.append(Region(kind, t, end))
            t = end + round(rng.uniform(*GAP_S) * fs)
        else:
            t += round(rng.uniform(2.0, 8.0) * fs)
    return tuple(events)
