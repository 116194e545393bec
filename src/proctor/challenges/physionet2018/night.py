"""Whole nights at the published rates: wake periods, RERAs, apneas and hypopneas.

The 2018 paper counts, over 1,983 training records of about 7.7 h, 43,822 RERA arousals,
56,936 hypopneas, 58,000 apneas and about 200 other target arousals; about 30 % of a night is
wake. A record of at least ``NIGHT_MIN_S`` seconds is drawn as such a night:

- **stages**: a sleep-onset wake period (5–30 min), then sleep bouts (exponential, mean 50 min)
  and wake bouts (exponential, mean 22 min) in turn; within sleep, 30 s epochs move between N1,
  N2, N3 and R with persistence. Each wake bout after sleep is a wake-up (±10 s not scored).
- **events**, only while asleep and never overlapping: each kind's count is Poisson with the
  published rate per hour of record times the record's severity (gamma, mean 1: some sleepers
  breathe worse). RERA regions last 12–45 s (the whole respiratory-effort sequence that ends in
  the arousal), apneas and hypopneas 10–40 s; the rare other arousals 3–15 s.

The label rules (``labels``) then give targets of about 3 % of the scored time, as in a real
record (3.2 %); ``label_shares`` measures them on the schedule alone, without any waveform.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from proctor.challenges.physionet2018.labels import (
    EXCLUDED_RESPIRATORY,
    Region,
    arousal_labels,
    parse_annotations,
)

NIGHT_MIN_S = 3600
"""Records at least this long (seconds) are whole nights at the published rates."""
PUBLISHED_RECORDS = 1983
PUBLISHED_HOURS = 7.7
PUBLISHED_COUNTS = {
    "arousal_rera": 43822,
    "resp_hypopnea": 56936,
    "apnea": 58000,
    "other_arousal": 200,
}
"""Counts of the 2018 paper over the training set (apneas of every kind together)."""
APNEA_KINDS = ("resp_obstructiveapnea", "resp_centralapnea", "resp_mixedapnea")
APNEA_WEIGHTS = (0.75, 0.18, 0.07)
OTHER_AROUSALS = ("arousal_spontaneous", "arousal_plm", "arousal_bruxism")
NIGHT_DURATION_S = {"arousal_rera": (12.0, 45.0), "resp_hypopnea": (10.0, 40.0),
                    "apnea": (10.0, 40.0), "other_arousal": (3.0, 15.0)}  # fmt: skip
"""Uniform range of each event family's duration, seconds."""
ONSET_WAKE_S = (300.0, 1800.0)
SLEEP_BOUT_MEAN_S = 3000.0
WAKE_BOUT_MEAN_S = 1320.0
MIN_BOUT_S = 60.0
SLEEP_STAGE_NAMES = ("N1", "N2", "N3", "R")
STAGE_MOVES = {
    "N1": (0.80, 0.17, 0.0, 0.03),
    "N2": (0.03, 0.90, 0.04, 0.03),
    "N3": (0.0, 0.10, 0.90, 0.0),
    "R": (0.04, 0.04, 0.0, 0.92),
}
"""Per-epoch probabilities of the next sleep stage (N1, N2, N3, R) given the current one."""
SEVERITY_SHAPE = 4.0
"""Shape of the gamma severity factor (mean 1): records differ in how often events happen."""
MIN_GAP_S = 5.0
"""Seconds between two events at least."""


def rate_per_hour(family: str) -> float:
    """The published events of ``family`` per hour of record."""
    return PUBLISHED_COUNTS[family] / PUBLISHED_RECORDS / PUBLISHED_HOURS


def draw_night_stages(
    rng: np.random.Generator, *, length: int, fs: int, first: int, epoch: int
) -> tuple[tuple[int, str], ...]:
    """Stage marks every ``epoch`` samples from ``first``: wake and sleep bouts in turn."""
    marks: list[tuple[int, str]] = []
    start = first
    awake, left = True, rng.uniform(*ONSET_WAKE_S) * fs
    stage = "N1"
    while start < length:
        if left <= 0:
            awake = not awake
            mean = WAKE_BOUT_MEAN_S if awake else SLEEP_BOUT_MEAN_S
            left = max(rng.exponential(mean), MIN_BOUT_S) * fs
            stage = "N1"
        if awake:
            marks.append((start, "W"))
        else:
            marks.append((start, stage))
            stage = str(rng.choice(SLEEP_STAGE_NAMES, p=STAGE_MOVES[stage]))
        start += epoch
        left -= epoch
    return tuple(marks)


def draw_night_events(
    rng: np.random.Generator, asleep: np.ndarray, *, fs: int, edge: int
) -> tuple[Region, ...]:
    """Non-overlapping events in sleep at the published rates (scaled by a severity)."""
    hours = len(asleep) / fs / 3600
    severity = rng.gamma(SEVERITY_SHAPE, 1 / SEVERITY_SHAPE)
    wanted: list[str] = []
    for family in PUBLISHED_COUNTS:
        wanted += [family] * int(rng.poisson(rate_per_hour(family) * hours * severity))
    rng.shuffle(wanted)
    sleep_samples = np.flatnonzero(asleep[edge : len(asleep) - edge]) + edge
    taken = np.zeros(len(asleep), dtype=bool)
    gap = round(MIN_GAP_S * fs)
    events: list[Region] = []
    for family in wanted:
        for _ in range(20):  # a few tries; a crowded night keeps fewer events
            if not len(sleep_samples):
                break
            start = int(rng.choice(sleep_samples))
            end = start + round(rng.uniform(*NIGHT_DURATION_S[family]) * fs)
            if (
                end < len(asleep) - edge
                and asleep[start : end + 1].all()
                and not taken[max(start - gap, 0) : end + gap + 1].any()
            ):
                taken[start : end + 1] = True
                events.append(Region(_kind(rng, family), start, end))
                break
    return tuple(sorted(events, key=lambda region: region.start))


def _kind(rng: np.random.Generator, family: str) -> str:
    if family == "apnea":
        return str(rng.choice(APNEA_KINDS, p=APNEA_WEIGHTS))
    if family == "other_arousal":
        return str(rng.choice(OTHER_AROUSALS))
    return family


@dataclass(frozen=True)
class LabelShares:
    """What a record's labels hold: shares (0–1) and event counts.

    ``target``: target samples over scored samples (+1 over +1 and 0); ``not_scored``: −1
    samples over all; ``wake``: samples staged ``W`` over all.
    """

    target: float
    not_scored: float
    wake: float
    reras: int
    apneas_hypopneas: int
    other_arousals: int


def label_shares(
    stages: tuple[tuple[int, str], ...], events: tuple[Region, ...], *, length: int, fs: int
) -> LabelShares:
    """Measure the labels the 2018 rules give a schedule (no waveform is made)."""
    marks: list[tuple[int, int, str]] = [(s, 0, stage) for s, stage in stages]
    for event in events:
        marks += [(event.start, 1, f"({event.kind}"), (event.end, 2, f"{event.kind})")]
    marks.sort(key=lambda mark: (mark[0], mark[1]))
    annotations = parse_annotations([m[0] for m in marks], [m[2] for m in marks])
    labels = arousal_labels(annotations, length=length, fs=fs)
    scored = int((labels >= 0).sum())
    bounds = [s for s, _ in stages[1:]] + [length]
    wake = sum(stop - start for (start, stage), stop in zip(stages, bounds, strict=True)
               if stage == "W")  # fmt: skip
    kinds = [event.kind for event in events]
    return LabelShares(
        target=float((labels == 1).sum()) / scored if scored else 0.0,
        not_scored=float((labels < 0).sum()) / length,
        wake=wake / length,
        reras=kinds.count("arousal_rera"),
        apneas_hypopneas=sum(kind in EXCLUDED_RESPIRATORY for kind in kinds),
        other_arousals=sum(kind in OTHER_AROUSALS for kind in kinds),
    )
