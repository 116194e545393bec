"""A task's ``scorer:`` block: a name plus a mapping, and what a scorer declares it reports.

A task's ``scorer`` is a built-in scorer's name or a scorer kind's mapping; which names and
kinds exist is the scorer table's (``scoring.registry``), handed to a load as a
:class:`ScorerCatalog` by ``proctor.resolve``. Every scorer declares its metrics, each with its
direction (:class:`ScorerDeclaration`). The organizer's own scoring program is the kind whose
shape this module holds, since the loader resolves its folders and environment:

::

    scorer:
      program: scoring/            # a folder of the challenge, copied into the bundle
      command: [python3, score.py] # run in that folder
      metrics:
        mae: {direction: lower, description: mean absolute error}
      limits: {wall_s: 600, memory_bytes: 4294967296}   # optional
      environment: ...             # optional; default: the task's environment
      check: [python3, check.py]   # optional: is one case's output valid? Or a check kind
                                   # of Proctor's: `check: table` with a `table:` block
                                   # (prediction, id, target, metrics...): the table
                                   # scorer's checks, before the program runs
      scores_files: [scores.json]  # optional: names tried in order (.txt: `key: value` YAML)
      booleans: refused            # optional: `numbers` reads true/false as 1/0 (Codabench)
      strings: refused             # optional: `numbers` reads "0.91" or 1e-05 as numbers
      detailed_page: detailed_results  # optional: `first_html` also takes another .html
      writable_inputs: false       # optional: program, references, outputs as scratch copies
      missing_metrics: refused     # optional: `empty` leaves a metric not written without value
      score_keys: {err_new: err-new}  # optional: the key a metric is written under, where
                                   # it is no metric name (a Codabench column key)
      computed:                    # optional: metrics Proctor computes from written ones
        mean_score: {operation: avg, of: [score_a, score_b]}
      concurrent_ingestion:        # optional: Codabench's ingestion_only_during_scoring
        program: programs/ingestion
        command: [python3, /app/program/ingest.py]

The program runs in the sandbox after the exam (or on the uploaded predictions) and writes
``scores.json``; :mod:`proctor.scoring.program` runs it and checks what it wrote. Where things
are inside the sandbox is data (:class:`ProgramMounts`), so a bundle made for another platform
(Codabench's ``/app/program``, ``/app/input/ref``...) is the same scorer with other mount points.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from proctor.spec.environment import Environment
from proctor.spec.protocols import LocatedError, Strict, describe_error
from proctor.types import Direction


@dataclass(frozen=True, slots=True)
class MetricDeclaration:
    """One metric a scorer reports: its name, direction, a one-line meaning and its domain.

    ``domain`` is (low, high), the values the metric can take (``-inf``/``inf`` where
    unbounded; None: not declared): plots keep their axes inside it, so an AUC never passes 1.
    ``count``: the metric counts something (records scored), so every face writes it as a
    whole number (``54``, never ``54.000000``) and JSON answers carry it as an integer.
    """

    name: str
    direction: Direction
    summary: str = ""
    domain: tuple[float, float] | None = None
    count: bool = False

    @property
    def rankable(self) -> bool:
        """True when a leaderboard may order entries by this metric."""
        return self.direction is not Direction.NEUTRAL


@dataclass(frozen=True, slots=True)
class ScorerDeclaration:
    """What a scorer reports: its metrics (in report order) and the reference file of a case.

    ``reference`` is a template with ``{record}``: the file every hidden case needs among the
    task's hidden references, checked when a challenge is installed (empty: none is named).
    ``cases``: the count metric that says how many cases a score stands on (``records``), shown
    as ``n=…`` beside an interval (empty: none).
    """

    name: str
    metrics: tuple[MetricDeclaration, ...]
    reference: str
    summary: str = ""
    cases: str = ""

    @property
    def metric_names(self) -> tuple[str, ...]:
        """The names of the metrics, in report order."""
        return tuple(metric.name for metric in self.metrics)

    @property
    def count_metrics(self) -> frozenset[str]:
        """The metrics that count something, written as whole numbers."""
        return frozenset(metric.name for metric in self.metrics if metric.count)

    def metric(self, name: str) -> MetricDeclaration:
        """The declaration of metric ``name`` (``KeyError`` when the scorer has none)."""
        for metric in self.metrics:
            if metric.name == name:
                return metric
        raise KeyError(name)


UNIT_INTERVAL = (0.0, 1.0)
"""The domain of a share, a probability, an area under a curve, a Dice or an F1."""


def metric_declarations(
    *rows: tuple[str, Direction, str]
    | tuple[str, Direction, str, tuple[float, float]]
    | MetricDeclaration,
) -> tuple[MetricDeclaration, ...]:
    """``(name, direction, summary[, domain])`` rows (or declarations) as a scorer's metrics."""
    return tuple(
        row if isinstance(row, MetricDeclaration) else MetricDeclaration(*row) for row in rows
    )


def count_metric(name: str, summary: str) -> MetricDeclaration:
    """A metric that counts something (records scored): neutral, whole, never below 0."""
    return MetricDeclaration(name, Direction.NEUTRAL, summary, (0.0, math.inf), count=True)


def whole_counts(
    scores: Mapping[str, float | None], counts: frozenset[str]
) -> dict[str, int | float | None]:
    """``scores`` with each finite count as an ``int``: what faces and JSON answers show."""
    return {
        name: int(value) if name in counts and value is not None and math.isfinite(value) else value
        for name, value in scores.items()
    }


PROGRAM_SCORER = "program"
"""The name a scoring program's declaration carries (it is no built-in scorer's name)."""

_METRIC = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_RESERVED_TARGETS = ("/proc", "/dev", "/etc", "/usr", "/tmp", "/bin", "/lib", "/lib64", "/opt")  # noqa: S108 (paths inside the sandbox, refused as mount points)


class ProgramMetric(Strict):
    """One metric the program reports: which way it improves and what it means."""

    direction: Direction
    description: str = ""
    range: tuple[float, float] | None = None
    count: bool = False
    """The metric counts something: shown as a whole number (``54``), never ``54.000000``."""

    @field_validator("range")
    @classmethod
    def _ordered(cls, bounds: tuple[float, float] | None) -> tuple[float, float] | None:
        if bounds is not None and not bounds[0] < bounds[1]:
            raise ValueError(f"range {list(bounds)} must be [low, high] with low < high")
        return bounds


Operation = Literal["avg", "sum", "min", "max"]


class ComputedMetric(Strict):
    """A metric Proctor computes from others the program wrote (a Codabench ``computation``)."""

    operation: Operation
    of: tuple[str, ...] = Field(min_length=1)


class ProgramLimits(Strict):
    """What one run of the scoring program may use.

    ``wall_s``: seconds; ``memory_bytes``: its memory (cgroup and address space);
    ``scores_bytes``: its writable output folder; ``log_bytes``: each of stdout and stderr
    kept for the organizer; ``processes``: processes and threads at once; ``shared_bytes``:
    the shared folder (``mounts.shared``); ``scratch_bytes``: what a program with
    ``writable_inputs`` may add to its copies of the references and outputs.
    """

    wall_s: float = Field(default=600.0, gt=0, strict=True)
    memory_bytes: int = Field(default=2 * 1024**3, gt=0, strict=True)
    scores_bytes: int = Field(default=16 * 1024**2, gt=0, strict=True)
    log_bytes: int = Field(default=256 * 1024, gt=0, strict=True)
    processes: int = Field(default=64, gt=0, strict=True)
    shared_bytes: int = Field(default=64 * 1024**2, gt=0, strict=True)
    scratch_bytes: int = Field(default=64 * 1024**2, gt=0, strict=True)


def _sandbox_path(value: str) -> str:
    if not value.startswith("/"):
        raise ValueError(f"{value!r} must be an absolute path inside the sandbox")
    clean = posixpath.normpath(value)
    if clean == "/" or ".." in clean.split("/"):
        raise ValueError(f"{value!r} must name a folder below '/', without '..'")
    for reserved in _RESERVED_TARGETS:
        if clean == reserved or clean.startswith(reserved + "/"):
            raise ValueError(f"{value!r} would hide the sandbox's own {reserved}")
    return clean


class ProgramMounts(Strict):
    """Where the scoring program finds things inside the sandbox (absolute, distinct paths).

    ``program``: its own folder (read-only, the working folder); ``reference``: the task's
    hidden references (read-only); ``outputs``: the entry's collected outputs (read-only);
    ``scores``: the writable, size-capped folder where it writes ``scores.json``; ``cases``:
    a file listing the task's cases, one per line; ``output``: the one output ``check`` reads;
    ``shared``: a writable, capped, empty folder (Codabench's ``/app/shared``; None: none).
    """

    program: str = "/scoring/program"
    reference: str = "/scoring/reference"
    outputs: str = "/scoring/outputs"
    scores: str = "/scoring/scores"
    cases: str = "/scoring/cases.txt"
    output: str = "/scoring/output"
    shared: str | None = None

    @field_validator("*")
    @classmethod
    def _inside(cls, value: str | None) -> str | None:
        return None if value is None else _sandbox_path(value)

    @model_validator(mode="after")
    def _distinct(self) -> ProgramMounts:
        seen: dict[str, str] = {}
        for key, value in self.model_dump().items():
            if value is None:
                continue
            for other, path in seen.items():
                if value == path or value.startswith(path + "/") or path.startswith(value + "/"):
                    raise LocatedError(f"{value!r} overlaps {other} ({path!r})", key)
            seen[key] = value
        return self


class OutputCheckSettings(Strict):
    """Base of a check kind's settings: Proctor's own checks of the outputs a program scores.

    A scoring program's ``check: KIND`` (``check: table``) takes the block under the key
    ``KIND`` of its mapping (``table: {prediction: submission.csv}``), validated by the
    check kind's model (``scoring.program.CHECK_KINDS``): the program keeps the checks and
    messages of the built-in scorer, and a malformed output is the entry's failure.
    """

    @property
    def reference(self) -> str:
        """The reference file each hidden case needs for the check, with ``{record}`` ("")."""
        return ""


class ScorerSettings(Strict):
    """Base of a scorer kind's settings (a ``scorer:`` mapping): it declares its metrics.

    A kind is named by the mapping's ``kind`` key, or by its one key naming a kind
    (``table: {...}``); a mapping with ``program`` and no ``kind`` is a scoring program. The
    scorer table (``scoring.registry``) gives each kind its settings model and its functions.
    """

    @property
    def declaration(self) -> ScorerDeclaration:
        """The metrics this scorer reports, with their directions."""
        raise NotImplementedError


class ConcurrentIngestion(Strict):
    """Codabench's ``ingestion_only_during_scoring``: an ingestion program run beside scoring.

    It runs the participant's code (the upload, at ``/app/ingested_program`` and
    ``/app/input/res``) at the same time as the scoring program, each in a sandbox of its own
    (its own slot; the references are mounted in the scoring program's only), the two talking
    through the folder both see at ``/app/shared`` (the scoring program's ``mounts.shared``)
    and, with ``writable_inputs``, through the one copy of the upload both see at
    ``/app/input/res`` (where an AutoDL-style ingestion writes its predictions).
    ``/app/program`` is this folder, ``/app/input_data`` the ``input_data`` folder,
    ``/app/output`` a capped folder of its own (discarded). Everything either program prints
    is the organizer's.
    """

    program: Path
    command: tuple[str, ...] = Field(min_length=1)
    input_data: Path | None = None


MOVED_INGESTION = (
    "`ingestion` moved out of the scorer: an ingestion program now runs the participant's code "
    "in the exam stage (`protocol: {kind: ingestion, programs: {TASK: {program, command, "
    "wall_s}}}`), or beside the scoring program as `concurrent_ingestion`; import the bundle "
    "again with `proctor challenge import` (docs/import-bundles.md)"
)


class ScoringProgram(ScorerSettings):
    """The organizer's scoring program (see the module docstring)."""

    kind: Literal["program"] = "program"
    program: Path
    command: tuple[str, ...] = Field(min_length=1)
    metrics: dict[str, ProgramMetric] = Field(min_length=1)
    limits: ProgramLimits = ProgramLimits()
    environment: Environment | None = None
    check: tuple[str, ...] | OutputCheckSettings | None = None
    """A command run on one case's output, or a check kind's settings (``check: table``)."""
    mounts: ProgramMounts = ProgramMounts()
    scores_files: tuple[str, ...] = Field(default=("scores.json",), min_length=1)
    booleans: Literal["refused", "numbers"] = "refused"
    """A ``true``/``false`` score: refused, or read as 1 and 0 (as Codabench stores them)."""
    detailed_page: Literal["detailed_results", "first_html"] = "detailed_results"
    """The page kept as the submission's detailed results: ``detailed_results.html``, or
    (``first_html``, Codabench) without one the first other ``.html`` file by name."""
    strings: Literal["refused", "numbers"] = "refused"
    """A score written as text (``"0.91"``; ``1e-05`` in ``scores.txt``, which YAML reads as
    text): refused, or read as the finite number it spells (as Codabench's decimal column
    stores it)."""
    writable_inputs: bool = False
    """The program's folder, references and outputs shown as writable scratch copies
    (Codabench mounts ``/app/program`` and ``/app/input`` writable): only this run's slot may
    change them (but ``/app/input/res``
    beside a concurrent ingestion: one copy both change), within ``limits.scratch_bytes``; the
    copies are discarded afterwards, the originals never change."""
    computed: dict[str, ComputedMetric] = Field(default_factory=dict)
    missing_metrics: Literal["refused", "empty"] = "refused"
    """A declared metric the program did not write: the task fails (the organizer's
    contract), or ``empty``: it has no value (Codabench stores only the keys written and leaves
    the column empty), with a warning in the organizer's log."""
    score_keys: dict[str, str] = Field(default_factory=dict)
    """``{metric: key}``: the key the program writes a metric under in its scores file, where
    that key is no metric name (Codabench's column key ``err-new``); read as the metric."""
    concurrent_ingestion: ConcurrentIngestion | None = None

    @model_validator(mode="before")
    @classmethod
    def _ingestion_moved(cls, value: Any) -> Any:
        if isinstance(value, dict) and "ingestion" in value:
            raise LocatedError(MOVED_INGESTION, "ingestion")
        return value

    @field_validator("check")
    @classmethod
    def _some_command(
        cls, check: tuple[str, ...] | OutputCheckSettings | None
    ) -> tuple[str, ...] | OutputCheckSettings | None:
        if isinstance(check, tuple) and not check:
            raise ValueError("an empty command: give one ([python3, check.py]) or leave it out")
        return check

    @property
    def check_command(self) -> tuple[str, ...] | None:
        """The command run on one case's output, or None (no check, or a check kind)."""
        return self.check if isinstance(self.check, tuple) else None

    @model_validator(mode="after")
    def _shared_for_concurrent_ingestion(self) -> ScoringProgram:
        if self.concurrent_ingestion is not None and self.mounts.shared is None:
            raise LocatedError(
                "a concurrent ingestion talks to the scoring program through a shared folder: "
                "set mounts.shared (Codabench: /app/shared)",
                "concurrent_ingestion",
            )
        return self

    @property
    def runs_entry_code(self) -> bool:
        """True when scoring also runs the participant's code (a concurrent ingestion)."""
        return self.concurrent_ingestion is not None

    @field_validator("scores_files")
    @classmethod
    def _plain_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            if "/" in name or name in ("", ".", "..") or not name.endswith((".json", ".txt")):
                raise LocatedError(
                    f"{name!r} must be a file name ending in .json or .txt (no folder)", name
                )
        return names

    @model_validator(mode="after")
    def _computed_from_metrics(self) -> ScoringProgram:
        for name, computed in self.computed.items():
            if name not in self.metrics:
                raise LocatedError(f"{name!r} must be declared under metrics too", "computed")
            for source in computed.of:
                if source not in self.metrics or source in self.computed:
                    raise LocatedError(
                        f"{source!r} is not a metric the program writes", f"computed.{name}.of"
                    )
        return self

    @model_validator(mode="after")
    def _score_keys_of_metrics(self) -> ScoringProgram:
        seen: set[str] = set()
        for name, key in self.score_keys.items():
            if name not in self.metrics or name in self.computed:
                raise LocatedError(f"{name!r} is not a metric the program writes", "score_keys")
            if not key.strip() or key == "cases" or key in seen:
                raise LocatedError(f"{key!r}: a key must be named once, not 'cases'", "score_keys")
            seen.add(key)
        return self

    @field_validator("metrics")
    @classmethod
    def _metric_names(cls, metrics: dict[str, ProgramMetric]) -> dict[str, ProgramMetric]:
        for name in metrics:
            if not _METRIC.match(name) or name == "cases":
                raise LocatedError(
                    f"{name!r} is not a metric name: use letters, digits and '_' (not 'cases')",
                    name,
                )
        return metrics

    @field_validator("program")
    @classmethod
    def _relative(cls, program: Path) -> Path:
        if not program.is_absolute() and ".." in program.parts:
            raise ValueError(
                f"{str(program)!r} must be a folder inside the challenge folder, without '..'"
            )
        return program

    @property
    def declaration(self) -> ScorerDeclaration:
        """The metrics the program reports, as a scorer declaration (no reference template)."""
        metrics = tuple(
            MetricDeclaration(
                name, metric.direction, metric.description, metric.range, count=metric.count
            )
            for name, metric in self.metrics.items()
        )
        reference = self.check.reference if isinstance(self.check, OutputCheckSettings) else ""
        return ScorerDeclaration(
            PROGRAM_SCORER, metrics, reference=reference, summary="scoring program"
        )


ScorerSpec = str | ScorerSettings
"""A task's ``scorer``: a built-in scorer's name, or a mapping (a scoring program...)."""


@dataclass(frozen=True, slots=True)
class ScorerCatalog:
    """What a task's ``scorer`` may be: what a load is given (``proctor.resolve``).

    ``named``: the built-in scorers' declarations, by the name a task gives; ``kinds``: the
    settings model of each scorer kind (a ``scorer:`` mapping), by kind.
    """

    named: Mapping[str, ScorerDeclaration]
    kinds: Mapping[str, type[ScorerSettings]]
    checks: Mapping[str, type[OutputCheckSettings]] = field(default_factory=dict)
    """The settings model of each check kind a scoring program may name (``check: table``)."""


SCORER_CATALOG = "scorer_catalog"
"""The key of the validation context holding the :class:`ScorerCatalog` of a load."""


def parse_scorer(value: Any, catalog: ScorerCatalog) -> ScorerSpec:
    """Validate a ``scorer:`` value: a known built-in name or a scorer kind's mapping."""
    if isinstance(value, ScorerSettings):
        return value
    if isinstance(value, str):
        if value not in catalog.named:
            raise LocatedError(
                f"unknown scorer {value!r}: use one of {', '.join(sorted(catalog.named))}, a "
                "table metric ({table: {metrics: [NAME]}}), or a scoring program (a mapping with "
                "program, command and metrics)",
                "",
            )
        return value
    if not isinstance(value, dict):
        raise LocatedError(
            "must be a built-in scorer's name or a mapping with program, command and metrics", ""
        )
    kind = value.get("kind") or _kind_by_key(value, catalog.kinds)
    model = catalog.kinds.get(kind) if isinstance(kind, str) else None
    if model is None:
        known = ", ".join(catalog.kinds)
        raise LocatedError(f"unknown scorer kind {kind!r}: use one of {known}", "kind")
    if issubclass(model, ScoringProgram):
        value = _named_check(value, catalog.checks)
    try:
        return model.model_validate(value)
    except ValidationError as err:
        location, message = describe_error(err.errors()[0])
        raise LocatedError(message, location) from None


def _named_check(
    value: dict[str, Any], checks: Mapping[str, type[OutputCheckSettings]]
) -> dict[str, Any]:
    """A program's ``check: KIND`` with its ``KIND:`` block, as the check kind's settings."""
    kind = value.get("check")
    if not isinstance(kind, str):
        return value
    model = checks.get(kind)
    if model is None:
        known = ", ".join(sorted(checks)) or "none"
        raise LocatedError(
            f"unknown check {kind!r}: give a command ([python3, check.py]) or a check kind "
            f"({known})",
            "check",
        )
    found = dict(value)
    block = found.pop(kind, None)
    if block is None:
        block = {}
    if not isinstance(block, dict):
        raise LocatedError(f"check: {kind} reads its options from a mapping here", kind)
    try:
        found["check"] = model.model_validate(block)
    except ValidationError as err:
        location, message = describe_error(err.errors()[0])
        raise LocatedError(message, ".".join(part for part in (kind, location) if part)) from None
    return found


def _kind_by_key(value: dict[str, Any], kinds: Mapping[str, type[ScorerSettings]]) -> str:
    """Without ``kind``: the one key naming a kind (``table``, ``evalai``), else a program."""
    named = [key for key in value if key != PROGRAM_SCORER and key in kinds]
    if len(named) == 1 and PROGRAM_SCORER not in value:
        return str(named[0])
    return PROGRAM_SCORER


def scorer_declaration(scorer: ScorerSpec, catalog: ScorerCatalog) -> ScorerDeclaration:
    """The declaration (metrics and directions) of a task's scorer."""
    return scorer.declaration if isinstance(scorer, ScorerSettings) else catalog.named[scorer]
