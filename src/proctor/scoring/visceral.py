"""The VISCERAL Anatomy3 scorer: EvaluateSegmentation's Dice, AVGDIST, ARI and ICC per organ.

Each hidden volume's reference is a label map ``CASE.nii.gz`` holding one RadLex ID per voxel;
each case's stored output is a folder of ``RADLEXID.nii.gz`` masks (the ``command`` protocol).
An organ is compared in every volume whose reference holds it, exactly as the tool computes by
default (byte rescaling with streaming, fuzzy memberships, distances in voxels). A volume
without a mask for the organ, or with an empty one, is *empty*: the tool stops there ("Moving
image is empty!"), so it has no values, as on VISCERAL's dashboard.

Summary per organ: ``dice_ORGAN`` counts an empty volume as Dice 0 (its value for an empty mask),
so leaving out the hard volumes does not pay; ``avgdist``, ``adjrind`` and ``iccorr`` are means
over the volumes evaluated. An organ never segmented is *not segmented*: NaN, not an error.
``organs_dice`` (the leaderboard's) is the mean Dice over every annotated organ, 0 for organs
not segmented. The per-organ dashboard (:func:`dashboard`) goes with the scores.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from proctor.formats.nifti_masks import read_label_map, read_mask
from proctor.metrics.segmentation_compat import ToolEvaluation, tool_bytes
from proctor.scoring.base import Scorer, TaskScores
from proctor.spec.scorer import UNIT_INTERVAL, ScorerDeclaration, count_metric, metric_declarations
from proctor.types import Direction


@dataclass(frozen=True, slots=True)
class Organ:
    """One organ of the VISCERAL Anatomy benchmarks: its RadLex ID, metric key and name."""

    radlex: int
    key: str
    title: str


VISCERAL_ORGANS: tuple[Organ, ...] = (
    Organ(29663, "kidney_left", "left kidney"),
    Organ(29662, "kidney_right", "right kidney"),
    Organ(86, "spleen", "spleen"),
    Organ(58, "liver", "liver"),
    Organ(1326, "lung_left", "left lung"),
    Organ(1302, "lung_right", "right lung"),
    Organ(237, "urinary_bladder", "urinary bladder"),
    Organ(40358, "rectus_left", "left rectus abdominis"),
    Organ(40357, "rectus_right", "right rectus abdominis"),
    Organ(29193, "lumbar_vertebra_1", "lumbar vertebra 1"),
    Organ(7578, "thyroid", "thyroid"),
    Organ(170, "pancreas", "pancreas"),
    Organ(32248, "psoas_left", "left psoas major"),
    Organ(32249, "psoas_right", "right psoas major"),
    Organ(187, "gallbladder", "gallbladder"),
    Organ(2473, "sternum", "sternum"),
    Organ(480, "aorta", "aorta"),
    Organ(1247, "trachea", "trachea"),
    Organ(30325, "adrenal_left", "left adrenal gland"),
    Organ(30324, "adrenal_right", "right adrenal gland"),
)
"""The Anatomy3 organ table. The guidelines print 32249 for both psoas muscles; here the left
one has RadLex's own 32248 (each organ needs its own ID)."""

VISCERAL_METRICS: tuple[tuple[str, str, Direction], ...] = (
    ("dice", "DICE", Direction.HIGHER),
    ("avgdist", "AVGDIST", Direction.LOWER),
    ("adjrind", "ADJRIND", Direction.HIGHER),
    ("iccorr", "ICCORR", Direction.HIGHER),
)
"""(metric prefix, EvaluateSegmentation code, direction) of the benchmark's four metrics."""


def _organ_metrics(organ: Organ) -> tuple[tuple[str, Direction, str], ...]:
    return tuple(
        (f"{prefix}_{organ.key}", direction, f"{code} of the {organ.title} (mean over volumes)")
        for prefix, code, direction in VISCERAL_METRICS
    )


MASK_SUFFIX = ".nii.gz"
STATISTICS = ("empty", "count", "min", "max", "median", "mean")


def check_organ_folder(path: Path) -> str | None:
    """None when ``path`` is a folder of ``RADLEXID.nii.gz`` files (the stored case output)."""
    if not path.is_dir():
        return "expected a folder of organ masks"
    for item in path.iterdir():
        stem = item.name.removesuffix(MASK_SUFFIX)
        if not (item.name.endswith(MASK_SUFFIX) and stem.isalnum() and item.is_file()):
            return f"{item.name}: not an organ mask RADLEXID{MASK_SUFFIX}"
    return None


def organ_values(
    truth: np.ndarray, mask: Path, spacing: tuple[float, float, float]
) -> dict[str, float] | None:
    """The four metrics of one organ in one volume, or None when the mask is missing or empty."""
    if not mask.is_file():
        return None
    truth_bytes = tool_bytes(truth.astype(np.uint8))
    evaluation = ToolEvaluation(truth_bytes, tool_bytes(read_mask(mask)), spacing=spacing)
    if evaluation.counts().segment == 0:
        return None
    return {prefix: evaluation.value(code).value for prefix, code, _ in VISCERAL_METRICS}


class _Tally:
    """Per organ: volumes annotated, volumes empty, and the values of each metric."""

    def __init__(self) -> None:
        self.annotated: dict[str, int] = defaultdict(int)
        self.empty: dict[str, int] = defaultdict(int)
        self.values: dict[tuple[str, str], list[float]] = defaultdict(list)

    def add(self, organ: Organ, row: dict[str, float] | None) -> None:
        self.annotated[organ.key] += 1
        if row is None:
            self.empty[organ.key] += 1
            return
        for prefix, value in row.items():
            self.values[prefix, organ.key].append(value)


def _score_case(case: str, folder: Path, reference: Path, tally: _Tally) -> dict[str, float]:
    labels, spacing = read_label_map(reference)
    present = {int(value) for value in np.unique(labels)}
    row: dict[str, float] = {}
    for organ in VISCERAL_ORGANS:
        if organ.radlex not in present:
            continue
        values = organ_values(labels == organ.radlex, folder / f"{organ.radlex}{MASK_SUFFIX}",
                              spacing)  # fmt: skip
        tally.add(organ, values)
        for prefix, value in (values or {}).items():
            row[f"{prefix}_{organ.key}"] = value
    return row


def score_task(
    outputs: Path, references: Path, records: Sequence[str], output_template: str
) -> TaskScores:
    """Every annotated organ of every hidden volume against the stored masks."""
    tally, per_record, zero_filled = _Tally(), {}, []
    for case in records:
        folder = outputs / output_template.format(record=case)
        if not folder.is_dir():
            zero_filled.append(case)
        per_record[case] = _score_case(case, folder, references / f"{case}.nii.gz", tally)
    summary = _summary(tally)
    summary["records"] = float(len(records))
    summary["records_zero_filled"] = float(len(zero_filled))
    return TaskScores(summary, per_record, tuple(zero_filled), dashboard(tally_rows(tally)))


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if values else math.nan


def _summary(tally: _Tally) -> dict[str, float]:
    summary: dict[str, float] = {}
    dice_of_annotated = []
    for organ in VISCERAL_ORGANS:
        annotated = tally.annotated.get(organ.key, 0)
        for prefix, _, _ in VISCERAL_METRICS:
            values = tally.values.get((prefix, organ.key), [])
            if prefix == "dice" and values:
                summary[f"dice_{organ.key}"] = float(np.sum(values)) / annotated
            else:
                summary[f"{prefix}_{organ.key}"] = _mean(values)
        if annotated:
            dice = summary[f"dice_{organ.key}"]
            dice_of_annotated.append(0.0 if math.isnan(dice) else dice)
    summary["organs_dice"] = _mean(dice_of_annotated) if dice_of_annotated else 0.0
    summary["organs_segmented"] = float(
        sum(1 for organ in VISCERAL_ORGANS if tally.values.get(("dice", organ.key)))
    )
    return summary


def tally_rows(tally: _Tally) -> dict[tuple[str, str], tuple[int, list[float]]]:
    """(metric code, organ key) → (empty volumes, values) for every annotated organ."""
    rows = {}
    for organ in VISCERAL_ORGANS:
        if not tally.annotated.get(organ.key):
            continue
        for prefix, code, _ in VISCERAL_METRICS:
            rows[code, organ.key] = (tally.empty[organ.key], tally.values[prefix, organ.key])
    return rows


def dashboard(
    rows: Mapping[tuple[str, str], tuple[int, Sequence[float]]],
) -> dict[str, dict[str, dict[str, float]]]:
    """VISCERAL's private dashboard: metric → organ → empty, count, min, max, median, mean."""
    board: dict[str, dict[str, dict[str, float]]] = {}
    for (code, organ), (empty, values) in rows.items():
        data = np.asarray(values, dtype=np.float64)
        stats = (
            (float(data.min()), float(data.max()), float(np.median(data)), float(data.mean()))
            if data.size
            else (math.nan,) * 4
        )
        board.setdefault(code, {})[organ] = dict(
            zip(STATISTICS, (float(empty), float(data.size), *stats), strict=True)
        )
    return board


SCORER = Scorer(
    ScorerDeclaration(
        name="visceral",
        summary="VISCERAL Anatomy3: EvaluateSegmentation's Dice, AVGDIST, ARI and ICC per organ",
        reference="{record}.nii.gz",
        cases="records",
        metrics=metric_declarations(
            (
                "organs_dice",
                Direction.HIGHER,
                "mean Dice over the annotated organs (0 if none)",
                UNIT_INTERVAL,
            ),
            *(row for organ in VISCERAL_ORGANS for row in _organ_metrics(organ)),
            count_metric("organs_segmented", "organs with output in some volume"),
            count_metric("records", "hidden volumes scored"),
            count_metric("records_zero_filled", "volumes with no usable output"),
        ),
    ),
    score_task,
    check_organ_folder,
)
"""The ``visceral`` scorer: what it reports, how it scores, how one output is checked."""
