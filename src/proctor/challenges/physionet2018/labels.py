"""Per-sample scoring labels of the 2018 arousal task, made from `.arousal` annotations.

The 2018 challenge page defines the labels; this module implements them exactly as follows,
with every window closed at both ends and clipped to the record (``fs`` samples a second):

- **target (+1)**: from 2 s before a RERA arousal (``arousal_rera``) begins up to 10 s after it
  ends; from 2 s before any other arousal (every other ``arousal_*`` region: spontaneous, PLM,
  bruxism, snore, vocalization, noise, …) up to 2 s after it ends.
- **not scored (−1)**: within 10 s before or after a wake-up, and from 10 s before an apnea
  (``resp_centralapnea``, ``resp_obstructiveapnea``, ``resp_mixedapnea``) or hypopnea
  (``resp_hypopnea``) region begins up to 10 s after it ends. A *wake-up* is a ``W`` stage mark
  that follows a sleep stage mark (``N1``, ``N2``, ``N3``, ``R``); a record that starts awake has
  no wake-up at its first mark.
- **non-arousal (0)**: everything else, including the rest of a wake period and the other
  respiratory regions (``resp_cheynestokesbreath``, ``resp_hypoventilation``,
  ``resp_partialobstructive``), which are neither targets nor excluded.

Precedence: not scored wins over target, target wins over non-arousal.

Annotations are ``(sample, aux_note)`` pairs as in the 2018 files: sleep stage marks (``W``,
``N1``, ``N2``, ``N3``, ``R``) and paired region marks ``(name`` … ``name)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from proctor.errors import InputFileError

SLEEP_STAGES = frozenset({"N1", "N2", "N3", "R"})
"""Stage marks that count as asleep; ``W`` after one of these is a wake-up."""

STAGES = SLEEP_STAGES | {"W"}
"""Every sleep stage mark the 2018 files carry."""

RERA = "arousal_rera"
"""The arousal kind whose target window extends 10 s past its end."""

EXCLUDED_RESPIRATORY = frozenset(
    {"resp_centralapnea", "resp_obstructiveapnea", "resp_mixedapnea", "resp_hypopnea"}
)
"""Region kinds (apneas and hypopneas) whose neighbourhood is not scored."""

TARGET_LEAD_S = 2.0
"""Seconds before any target arousal that are already target."""
RERA_TAIL_S = 10.0
"""Seconds after a RERA arousal that are still target."""
AROUSAL_TAIL_S = 2.0
"""Seconds after any other target arousal that are still target."""
EXCLUSION_S = 10.0
"""Seconds before and after a wake-up, apnea or hypopnea that are not scored."""


@dataclass(frozen=True)
class Region:
    """One annotated region: ``kind`` (``arousal_rera``), first and last sample (inclusive)."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Annotations:
    """The parsed content of one `.arousal` file: stage marks and closed regions."""

    stages: tuple[tuple[int, str], ...]
    regions: tuple[Region, ...]


def parse_annotations(samples: Sequence[int], notes: Sequence[str]) -> Annotations:
    """Pair the ``(name`` / ``name)`` marks into regions and collect the stage marks.

    ``samples`` must be non-decreasing. Raises ``InputFileError`` naming the annotation index for
    an unknown note, an unmatched mark or samples out of order.
    """
    if len(samples) != len(notes):
        raise InputFileError(f"{len(samples)} annotation samples but {len(notes)} notes")
    stages: list[tuple[int, str]] = []
    regions: list[Region] = []
    open_at: dict[str, int] = {}
    previous = 0
    for index, (sample, note) in enumerate(zip(samples, notes, strict=True)):
        where = f"annotation {index} (sample {sample}, note {note!r})"
        if sample < previous:
            raise InputFileError(f"{where}: samples must be non-decreasing")
        previous = sample
        if note in STAGES:
            stages.append((int(sample), note))
        elif note.startswith("("):
            kind = _region_kind(note[1:], where)
            if kind in open_at:
                raise InputFileError(f"{where}: {kind} opened again before it was closed")
            open_at[kind] = int(sample)
        elif note.endswith(")"):
            kind = _region_kind(note[:-1], where)
            if kind not in open_at:
                raise InputFileError(f"{where}: {kind} closed but never opened")
            regions.append(Region(kind, open_at.pop(kind), int(sample)))
        else:
            raise InputFileError(f"{where}: not a stage (W, N1, N2, N3, R) nor a region mark")
    if open_at:
        names = ", ".join(sorted(open_at))
        raise InputFileError(f"regions opened but never closed: {names}")
    return Annotations(tuple(stages), tuple(sorted(regions, key=lambda r: (r.start, r.end))))


def _region_kind(kind: str, where: str) -> str:
    if not kind.startswith(("arousal_", "resp_")):
        raise InputFileError(f"{where}: region kinds start with 'arousal_' or 'resp_'")
    return kind


def wake_ups(stages: Sequence[tuple[int, str]]) -> list[int]:
    """Samples of the ``W`` marks that follow a sleep stage mark (the subject wakes up)."""
    found: list[int] = []
    asleep = False
    for sample, stage in stages:
        if stage == "W" and asleep:
            found.append(sample)
        asleep = stage in SLEEP_STAGES
    return found


def is_target(kind: str) -> bool:
    """Whether a region of this kind is a target arousal (every ``arousal_*`` kind)."""
    return kind.startswith("arousal_")


def arousal_labels(annotations: Annotations, *, length: int, fs: float) -> npt.NDArray[np.float64]:
    """The per-sample label vector (+1 target, 0 non-arousal, −1 not scored) of one record.

    ``length`` is the record's number of samples, ``fs`` its sampling frequency in Hz; windows
    are rounded to whole samples. See the module docstring for the rules and precedence.
    """
    if length < 0 or fs <= 0:
        raise InputFileError(f"length must be ≥ 0 and fs > 0, got length={length}, fs={fs}")
    labels = np.zeros(length, dtype=np.float64)
    lead = round(TARGET_LEAD_S * fs)
    for region in annotations.regions:
        if is_target(region.kind):
            tail = RERA_TAIL_S if region.kind == RERA else AROUSAL_TAIL_S
            _fill(labels, region.start - lead, region.end + round(tail * fs), 1.0)
    margin = round(EXCLUSION_S * fs)
    for region in annotations.regions:
        if region.kind in EXCLUDED_RESPIRATORY:
            _fill(labels, region.start - margin, region.end + margin, -1.0)
    for sample in wake_ups(annotations.stages):
        _fill(labels, sample - margin, sample + margin, -1.0)
    return labels


def _fill(labels: npt.NDArray[np.float64], first: int, last: int, value: float) -> None:
    """Set ``labels[first..last]`` (both inclusive, clipped to the vector) to ``value``."""
    labels[max(first, 0) : max(last + 1, 0)] = value
