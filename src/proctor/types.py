"""The shared vocabulary of Proctor, at the bottom of the layers.

Enums every layer speaks (stages, disclosure levels, why a run failed), and the declarations of
the scorers Proctor knows, with the metrics they produce and each metric's direction. Scorer
implementations register from above (``scoring`` registers scorer functions), so ``spec``
validates a ``task``'s scorer against this module alone, without importing upward.

A new built-in scorer is declared here and registered in ``scoring.registry``; a test checks
that the two agree. Protocols are not listed here: each driver carries its kind, summary and
settings model, in the one driver table of ``protocols.registry``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class Stage(StrEnum):
    """The stages of one task's evaluation, in order (``rerun`` is the determinism check)."""

    PREP = "prep"
    QUIZ = "quiz"
    EXAM = "exam"
    RERUN = "rerun"
    SCORE = "score"


MAIN_STAGES = (Stage.PREP, Stage.QUIZ, Stage.EXAM, Stage.SCORE)
"""The stages every report lists (``rerun`` appears only when a phase asks for it)."""


class Disclosure(StrEnum):
    """What a participant sees of a stage.

    ``full`` diagnostics (log tails), ``errors`` only the error line, ``counts`` only counts of
    cases, failures and timeouts, ``none`` only whether the stage passed.
    """

    FULL = "full"
    ERRORS = "errors"
    COUNTS = "counts"
    NONE = "none"


class StageStatus(StrEnum):
    """The state a stage ends in."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


class RunStatus(StrEnum):
    """The state an evaluation (of one task, or of a whole submission) ends in."""

    SCORED = "scored"
    DRY_RUN = "dry_run"
    FAILED = "failed"


class Failure(StrEnum):
    """Whose fault a failed run was.

    ``entry``: the participant's (a bad archive, a failing script, a wrong answer);
    ``platform``: the host's (no mount, a full disk); ``scorer``: the scoring code or the
    references; ``infrastructure``: the worker died or was lost (set by the service).
    """

    ENTRY = "entry"
    PLATFORM = "platform"
    SCORER = "scorer"
    INFRASTRUCTURE = "infrastructure"


class JobState(StrEnum):
    """The one state machine of a job (an entry on one task), shared by web and workers.

    ``queued`` → ``running`` (a worker holds its lease) → ``done`` (a result is committed);
    ``running`` → ``queued`` again when the lease expires (the reaper, attempt + 1);
    ``queued``/``running`` → ``cancelled``; ``running`` → ``failed`` after the last attempt
    (``failure: infrastructure``).
    """

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        """True for a state no worker will change any more."""
        return self in (JobState.DONE, JobState.FAILED, JobState.CANCELLED)


JOB_TRANSITIONS: Mapping[JobState, frozenset[JobState]] = {
    JobState.QUEUED: frozenset({JobState.RUNNING, JobState.CANCELLED}),
    JobState.RUNNING: frozenset(
        {JobState.DONE, JobState.QUEUED, JobState.FAILED, JobState.CANCELLED}
    ),
    JobState.DONE: frozenset({JobState.QUEUED}),  # a rescore queues the job again
    JobState.FAILED: frozenset({JobState.QUEUED}),
    JobState.CANCELLED: frozenset(),
}
"""Allowed moves of :class:`JobState`; the job store refuses every other one."""


class Direction(StrEnum):
    """Which way a metric improves."""

    HIGHER = "higher"
    LOWER = "lower"
    NEUTRAL = "neutral"

    @property
    def higher_is_better(self) -> bool:
        """True for ``higher``; ranking a ``neutral`` metric is refused where it is declared."""
        return self is Direction.HIGHER


@dataclass(frozen=True, slots=True)
class MetricDeclaration:
    """One metric a scorer reports: its name, direction and a one-line meaning."""

    name: str
    direction: Direction
    summary: str = ""

    @property
    def rankable(self) -> bool:
        """True when a leaderboard may order entries by this metric."""
        return self.direction is not Direction.NEUTRAL


@dataclass(frozen=True, slots=True)
class ScorerDeclaration:
    """A built-in scorer: its metrics (in report order) and the reference file of each case.

    ``reference`` is a template with ``{record}``: the file every hidden case needs among the
    task's hidden references, checked when a challenge is installed.
    """

    name: str
    metrics: tuple[MetricDeclaration, ...]
    reference: str
    summary: str = ""

    @property
    def metric_names(self) -> tuple[str, ...]:
        """The names of the metrics, in report order."""
        return tuple(metric.name for metric in self.metrics)

    def metric(self, name: str) -> MetricDeclaration:
        """The declaration of metric ``name`` (``KeyError`` when the scorer has none)."""
        for metric in self.metrics:
            if metric.name == name:
                return metric
        raise KeyError(name)


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


def _metrics(*rows: tuple[str, Direction, str]) -> tuple[MetricDeclaration, ...]:
    return tuple(MetricDeclaration(name, direction, summary) for name, direction, summary in rows)


SCORERS: Mapping[str, ScorerDeclaration] = {
    "physionet2018": ScorerDeclaration(
        name="physionet2018",
        summary="PhysioNet/CinC 2018 arousals: gross AUPRC over every hidden record",
        reference="{record}-arousal.mat",
        metrics=_metrics(
            ("auprc", Direction.HIGHER, "gross area under the precision-recall curve"),
            ("auroc", Direction.HIGHER, "gross area under the ROC curve"),
            ("brier", Direction.LOWER, "Brier score over every scored sample"),
            ("ece", Direction.LOWER, "expected calibration error (10 equal-width bins)"),
            ("auprc_ci95_low", Direction.HIGHER, "bootstrap 95% interval of the AUPRC: low"),
            ("auprc_ci95_high", Direction.HIGHER, "bootstrap 95% interval of the AUPRC: high"),
            ("records", Direction.NEUTRAL, "hidden records scored"),
            ("records_zero_filled", Direction.NEUTRAL, "records scored as zeros (no output)"),
        ),
    ),
    "physionet2017": ScorerDeclaration(
        name="physionet2017",
        summary="PhysioNet/CinC 2017 AF classification: mean F1 of N, A, O",
        reference="REFERENCE.csv",
        metrics=_metrics(
            ("score", Direction.HIGHER, "mean F1 of normal, AF and other rhythm"),
            ("f1_normal", Direction.HIGHER, "F1 of normal rhythm (N)"),
            ("f1_af", Direction.HIGHER, "F1 of atrial fibrillation (A)"),
            ("f1_other", Direction.HIGHER, "F1 of other rhythm (O)"),
            ("f1_noisy", Direction.HIGHER, "F1 of noisy recordings (~), not in the score"),
            ("records", Direction.NEUTRAL, "hidden records scored"),
            ("records_zero_filled", Direction.NEUTRAL, "records answered as noise (no output)"),
        ),
    ),
    "ehealthkd2019": ScorerDeclaration(
        name="ehealthkd2019",
        summary="eHealth-KD 2019: the official F1 of one scenario (keyphrases and relations)",
        reference="{record}",
        metrics=_metrics(
            ("f1", Direction.HIGHER, "the scenario's official F1"),
            ("precision", Direction.HIGHER, "(correct + partial/2) / submitted items"),
            ("recall", Direction.HIGHER, "(correct + partial/2) / gold items"),
            ("correct_a", Direction.NEUTRAL, "keyphrases with the gold spans and label"),
            ("incorrect_a", Direction.NEUTRAL, "keyphrases with the gold spans, another label"),
            ("partial_a", Direction.NEUTRAL, "keyphrases overlapping a gold one"),
            ("missing_a", Direction.NEUTRAL, "gold keyphrases not found"),
            ("spurious_a", Direction.NEUTRAL, "submitted keyphrases matching none"),
            ("correct_b", Direction.NEUTRAL, "relations matching a gold one"),
            ("missing_b", Direction.NEUTRAL, "gold relations not found"),
            ("spurious_b", Direction.NEUTRAL, "submitted relations matching none"),
        ),
    ),
    "autowsl": ScorerDeclaration(
        name="autowsl",
        summary="AutoWSL 2019: ROC AUC of each dataset's prediction (label column)",
        reference="{record}.solution",
        metrics=_metrics(
            ("auc", Direction.HIGHER, "area under the ROC curve of the dataset's prediction"),
            ("datasets", Direction.NEUTRAL, "hidden datasets scored"),
            ("datasets_failed", Direction.NEUTRAL, "datasets without a usable prediction"),
        ),
    ),
    "visceral": ScorerDeclaration(
        name="visceral",
        summary="VISCERAL Anatomy3: EvaluateSegmentation's Dice, AVGDIST, ARI and ICC per organ",
        reference="{record}.nii.gz",
        metrics=_metrics(
            ("organs_dice", Direction.HIGHER, "mean Dice over the annotated organs (0 if none)"),
            *(row for organ in VISCERAL_ORGANS for row in _organ_metrics(organ)),
            ("organs_segmented", Direction.NEUTRAL, "organs with output in some volume"),
            ("records", Direction.NEUTRAL, "hidden volumes scored"),
            ("records_zero_filled", Direction.NEUTRAL, "volumes with no usable output"),
        ),
    ),
}
"""Every built-in scorer, by the name a task's ``scorer`` key uses."""
