"""The typed, frozen picture of a ``challenge.yaml``.

Every model forbids unknown keys, so a typo is an error that names its YAML path instead of a
setting silently left at its default. Paths are relative to the challenge folder until
``loader.load_challenge`` resolves them. Scorer names, scorer kinds and protocol kinds are
validated against the tables the loader is given (``proctor.resolve`` hands in the scorer
table's and the driver table's), so a ``Challenge`` only exists validated.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from proctor.spec.display import DEFAULT_PRECISION, PageName, check_page_path, check_precision
from proctor.spec.environment import HOST, Environment, EnvironmentSpec
from proctor.spec.leaderboards import BoardSpec, check_boards
from proctor.spec.protocols import (
    PROTOCOL_MODELS,
    LocatedError,
    ProtocolSettings,
    Strict,
    parse_protocol,
)
from proctor.spec.registration import RegistrationSpec
from proctor.spec.scorer import (
    SCORER_CATALOG,
    ScorerCatalog,
    ScorerDeclaration,
    ScorerSpec,
    ScoringProgram,
    parse_scorer,
    scorer_declaration,
)
from proctor.spec.submission_fields import MAX_FIELDS, SubmissionField, check_field_names
from proctor.types import Direction, Disclosure

Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
TIME_LIMITS = ("setup_s", "case_s", "stage_s")

__all__ = ["LocatedError", "ProtocolSettings"]


class StandIn(Strict):
    """Public data shaped as a task's hidden inputs and references, for the kit's replica."""

    inputs: Path
    references: Path


class TaskKit(Strict):
    """What a task's starting kit holds in place of its hidden data (``spec.kit`` in docs)."""

    stand_in: StandIn | None = None


class ChallengeKit(Strict):
    """What the starting kit's replica keeps: the scoring program (``include``) or not."""

    scorer: Literal["include", "omit"] = "include"


class PublishedFile(Strict):
    """An organizer's extra file on the challenge's Files page: a file of the challenge folder.

    ``phase``: the phase it belongs to (absent: the whole challenge).
    """

    path: Path
    phase: str | None = None
    title: str = ""


class Task(Strict):
    """One dataset: public inputs (quiz), hidden inputs (exam) and hidden references (score).

    ``scorer`` names a built-in scorer or is a scorer kind's mapping (the organizer's scoring
    program, ``spec.scorer``), from the :class:`ScorerCatalog` the load is given; ``metrics``
    the subset of its metrics to report (all when empty).
    """

    name: Identifier
    public_inputs: Path
    hidden_inputs: Path | None = None
    hidden_references: Path | None = None
    scorer: ScorerSpec
    metrics: tuple[str, ...] = ()
    title: str = ""
    environment: Environment | None = None
    kit: TaskKit = TaskKit()
    _declaration: ScorerDeclaration = PrivateAttr()

    @field_validator("scorer", mode="before")
    @classmethod
    def _known_scorer(cls, value: Any, info: ValidationInfo) -> ScorerSpec:
        return parse_scorer(value, _catalog(info))

    @model_validator(mode="after")
    def _known_metrics(self, info: ValidationInfo) -> Task:
        self._declaration = scorer_declaration(self.scorer, _catalog(info))
        offered = self.scorer_declaration.metric_names
        for position, metric in enumerate(self.metrics):
            if metric not in offered:
                raise LocatedError(
                    f"scorer {self.scorer_name!r} has no metric {metric!r}: "
                    f"choose from {', '.join(offered)}",
                    f"metrics[{position}]",
                )
        return self

    @property
    def scorer_declaration(self) -> ScorerDeclaration:
        """The declaration of this task's scorer (its metrics and their directions)."""
        return self._declaration

    @property
    def scorer_name(self) -> str:
        """The built-in scorer's name, or ``program`` for a scoring program."""
        return self.scorer_declaration.name

    @property
    def scoring_program(self) -> ScoringProgram | None:
        """The organizer's scoring program, or None for a built-in scorer."""
        return self.scorer if isinstance(self.scorer, ScoringProgram) else None

    @property
    def reported_metrics(self) -> tuple[str, ...]:
        """The metrics this task reports, in order."""
        return self.metrics or self.scorer_declaration.metric_names


def _catalog(info: ValidationInfo) -> ScorerCatalog:
    context = info.context or {}
    if SCORER_CATALOG not in context:
        raise TypeError(f"validate a Challenge with the {SCORER_CATALOG!r} context")
    catalog: ScorerCatalog = context[SCORER_CATALOG]
    return catalog


class ResourceLimits(Strict):
    """Resource limits every protocol shares, in bytes and counts.

    Time limits live in the protocol block.
    ``home_bytes``: the entry's writable home; ``output_bytes``: one case's output file;
    ``entry_files``: files and folders an uploaded entry may hold; ``cpus_per_case``: cores one
    case may keep busy (a cgroup CPU quota; unset: no quota, which saves ~1-2 ms per case).
    """

    memory_bytes: int = Field(default=2 * 1024**3, gt=0, strict=True)
    home_bytes: int = Field(default=1024**3, gt=0, strict=True)
    tmp_bytes: int = Field(default=256 * 1024**2, gt=0, strict=True)
    processes: int = Field(default=128, gt=0, strict=True)
    output_bytes: int = Field(default=64 * 1024**2, gt=0, strict=True)
    log_bytes: int = Field(default=1024**2, gt=0, strict=True)
    entry_files: int = Field(default=10_000, gt=0, strict=True)
    cpus_per_case: float | None = Field(default=None, gt=0, strict=True)


PerRecord = Literal["none", "rounded", "full"]
Efficiency = Literal["none", "coarse"]
DetailedResults = Literal["per_record", "scores"]


class DisclosureSpec(Strict):
    """What a participant sees of each stage (``proctor.types.Disclosure``).

    ``per_record``: per-case scores on hidden data (a label oracle at full precision):
    ``none`` (default), ``rounded`` (two decimals) or ``full``. ``efficiency``: the exam's CPU,
    wall and memory figures when the exam is disclosed at ``counts`` or ``none``: ``none``
    (default; organizers keep them in the run folder) or ``coarse`` (at most 8 levels per
    figure, at most 3 bits each per submission). ``detailed_results``: when the team reads a
    scoring program's detailed results page: with per-case values (``per_record``, the
    default: the score stage at ``full`` and ``per_record: full``) or with the scores
    (``scores``: the score stage at ``full``, as Codabench's ``enable_detailed_results``).
    """

    prep: Disclosure = Disclosure.FULL
    quiz: Disclosure = Disclosure.FULL
    exam: Disclosure = Disclosure.COUNTS
    score: Disclosure = Disclosure.FULL
    per_record: PerRecord = "none"
    efficiency: Efficiency = "none"
    detailed_results: DetailedResults = "per_record"

    def exam_figures_hidden(self) -> bool:
        """True when no number derived from exam runs may reach the participant."""
        return self.exam in (Disclosure.COUNTS, Disclosure.NONE)


class DisclosureOverride(Strict):
    """A phase's changes to the challenge's disclosure (keys left out keep its value)."""

    prep: Disclosure | None = None
    quiz: Disclosure | None = None
    exam: Disclosure | None = None
    score: Disclosure | None = None
    per_record: PerRecord | None = None
    efficiency: Efficiency | None = None
    detailed_results: DetailedResults | None = None


class Parallelism(Strict):
    """Cases run at once; 0 means one per CPU core."""

    jobs: int = Field(default=0, ge=0, strict=True)


class LeaderboardSpec(Strict):
    """How entries are ordered: each task's ``metric`` ranks them, the mean rank orders them.

    The direction comes from the metric's declaration, never from the YAML.
    """

    metric: str


class Quota(Strict):
    """How many submissions a team may make in a phase (each limit absent = unlimited).

    ``per_day``: in any 24 hours; ``every_days``: one per that many days (VISCERAL: 7);
    ``total``: over the whole phase; ``concurrent``: queued or running at once. Which
    submissions count is ``services.platform.quota.counts`` (one cancelled before hidden data,
    failed by the platform before it, or refunded does not).
    """

    per_day: int | None = Field(default=None, gt=0, strict=True)
    every_days: float | None = Field(default=None, gt=0)
    total: int | None = Field(default=None, gt=0, strict=True)
    concurrent: int | None = Field(default=None, gt=0, strict=True)


class Phase(Strict):
    """A period of the challenge with its own tasks.

    ``determinism_cases``: after the exam, rerun that many cases and report whether their
    outputs are identical (0: no check). ``opens``/``closes``: ISO 8601 times with a time zone
    (absent: always open); after ``closes`` submissions are refused and queued jobs finish.
    ``quota``: submission limits per team (absent: unlimited). ``final_entries``: how many
    submissions a team may choose for the final ranking (its last N scored when it chooses none).
    ``aliases``: other names ``proctor run --phase`` takes (an imported bundle's phase index).
    """

    name: Identifier
    tasks: tuple[str, ...]
    title: str = ""
    aliases: tuple[str, ...] = ()
    determinism_cases: int = Field(default=0, ge=0, strict=True)
    disclosure: DisclosureOverride | None = None
    opens: datetime | None = None
    closes: datetime | None = None
    quota: Quota | None = None
    final_entries: int = Field(default=1, gt=0, strict=True)

    @field_validator("opens", "closes")
    @classmethod
    def _has_time_zone(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.utcoffset() is None:
            raise ValueError(
                f"{value.isoformat()} has no time zone: write it as 2025-03-01T12:00:00+00:00"
            )
        return value

    @model_validator(mode="after")
    def _opens_before_closes(self) -> Phase:
        if self.opens is not None and self.closes is not None and self.opens >= self.closes:
            raise LocatedError("the phase closes before it opens: swap the two times", "closes")
        return self

    def is_open(self, now: datetime) -> bool:
        """True when submissions are taken at ``now`` (an aware datetime)."""
        if self.opens is not None and now < self.opens:
            return False
        return self.closes is None or now < self.closes

    leaderboards: tuple[BoardSpec, ...] = ()  # besides "default" and "all" (spec.leaderboards)


class Challenge(Strict):
    """Everything an organizer decides about one challenge."""

    name: Identifier
    title: str
    description: str = ""
    protocol: ProtocolSettings
    tasks: tuple[Task, ...] = Field(min_length=1)
    limits: ResourceLimits = ResourceLimits()
    disclosure: DisclosureSpec = DisclosureSpec()
    parallelism: Parallelism = Parallelism()
    leaderboard: LeaderboardSpec | None = None
    phases: tuple[Phase, ...] = Field(min_length=1)
    environment: Environment = HOST
    precision: dict[str, int] = Field(default_factory=dict)  # spec.display
    pages: dict[PageName, str] = Field(default_factory=dict)  # spec.display
    kit: ChallengeKit = ChallengeKit()
    files: tuple[PublishedFile, ...] = ()
    files_public: bool = False
    registration: RegistrationSpec | None = None  # spec.registration
    submission_fields: tuple[SubmissionField, ...] = Field(default=(), max_length=MAX_FIELDS)
    root: Path = Field(default=Path("."), exclude=True)

    @field_validator("protocol", mode="before")
    @classmethod
    def _protocol_of_its_kind(cls, value: Any, info: ValidationInfo) -> ProtocolSettings:
        context = info.context or {}
        if PROTOCOL_MODELS not in context:
            raise TypeError(f"validate a Challenge with the {PROTOCOL_MODELS!r} context")
        return parse_protocol(value, context[PROTOCOL_MODELS])

    @field_validator("limits", mode="before")
    @classmethod
    def _time_limits_moved(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for key in TIME_LIMITS:
                if key in value:
                    raise LocatedError(
                        f"time limits belong to the protocol: move {key} to protocol.{key}", key
                    )
        return value

    @model_validator(mode="after")
    def _names_are_consistent(self) -> Challenge:
        task_names = [t.name for t in self.tasks]
        for index, name in enumerate(task_names):
            if name in task_names[:index]:
                raise LocatedError(
                    f"task name {name!r} is used twice: give each task its own name",
                    f"tasks[{index}].name",
                )
        phase_names = [p.name for p in self.phases]
        for index, name in enumerate(phase_names):
            if name in phase_names[:index]:
                raise LocatedError(
                    f"phase name {name!r} is used twice: give each phase its own name",
                    f"phases[{index}].name",
                )
        for index, item in enumerate(self.files):
            if item.phase is not None and item.phase not in phase_names:
                raise LocatedError(
                    f"no phase {item.phase!r} (phases: {', '.join(phase_names)})",
                    f"files[{index}].phase",
                )
        for index, phase in enumerate(self.phases):
            for position, task in enumerate(phase.tasks):
                if task not in task_names:
                    raise LocatedError(
                        f"phase {phase.name!r} names unknown task {task!r} "
                        f"(tasks: {', '.join(task_names)})",
                        f"phases[{index}].tasks[{position}]",
                    )
        return self

    @model_validator(mode="after")
    def _field_names_are_unique(self) -> Challenge:
        check_field_names(self.submission_fields)
        return self

    @model_validator(mode="after")
    def _protocol_names_tasks(self) -> Challenge:
        try:
            self.protocol.check_tasks(tuple(task.name for task in self.tasks))
        except LocatedError as err:
            raise LocatedError(str(err), f"protocol.{err.location}") from None
        return self

    @model_validator(mode="after")
    def _leaderboard_metric_is_reported(self) -> Challenge:
        board = self.leaderboard
        if board is None:
            return self
        for task in self.tasks:
            if board.metric not in task.reported_metrics:
                raise LocatedError(
                    f"task {task.name!r} does not report {board.metric!r}", "leaderboard.metric"
                )
            if not task.scorer_declaration.metric(board.metric).rankable:
                raise LocatedError(
                    f"{board.metric!r} is a count, not a score: rank on another metric",
                    "leaderboard.metric",
                )
        return self

    @model_validator(mode="after")
    def _display_is_consistent(self) -> Challenge:
        check_precision(self.precision, {m for t in self.tasks for m in t.reported_metrics})
        for name, path in self.pages.items():
            check_page_path(name, path)
        return self

    @property
    def terms_page(self) -> str | None:
        """The terms file (relative to the folder): ``registration.terms``, else ``pages.terms``."""
        if self.registration is not None and self.registration.terms is not None:
            return self.registration.terms
        return self.pages.get("terms")

    def digits(self, metric: str) -> int | None:
        """Digits shown after the point for ``metric``; None for a count (an integer)."""
        for task in self.tasks:
            if metric in task.reported_metrics:
                if task.scorer_declaration.metric(metric).count:
                    return None
                break
        return self.precision.get(metric, DEFAULT_PRECISION)

    @model_validator(mode="after")
    def _boards_are_consistent(self) -> Challenge:
        check_boards(self)
        return self

    def leaderboard_direction(self) -> Direction:
        """Which way the leaderboard metric improves (from the first task's scorer)."""
        if self.leaderboard is None:
            raise ValueError(f"challenge {self.name!r} declares no leaderboard")
        return self.tasks[0].scorer_declaration.metric(self.leaderboard.metric).direction

    def environment_of(self, task: str) -> EnvironmentSpec | None:
        """The environment ``task`` runs in (its own, else the challenge's); None for ``host``."""
        chosen = self.task(task).environment or self.environment
        return chosen if isinstance(chosen, EnvironmentSpec) else None

    def declared_environments(self) -> dict[str, EnvironmentSpec]:
        """Every environment the challenge declares, by name (the first of a name wins).

        The challenge's own, then each task's and its scoring program's.
        """
        found: dict[str, EnvironmentSpec] = {}
        chosen: list[Environment | None] = [self.environment]
        for task in self.tasks:
            program = task.scoring_program
            chosen += [task.environment, program.environment if program is not None else None]
        for spec in chosen:
            if isinstance(spec, EnvironmentSpec):
                found.setdefault(spec.name, spec)
        return found

    def scorer_environment_of(self, task: str) -> EnvironmentSpec | None:
        """The environment ``task``'s scoring program runs in: its own, else the task's.

        None for ``host`` (and for a built-in scorer, which runs in the worker).
        """
        program = self.task(task).scoring_program
        if program is None:
            return None
        if program.environment is not None:
            chosen = program.environment
            return chosen if isinstance(chosen, EnvironmentSpec) else None
        return self.environment_of(task)

    def disclosure_for(self, phase: Phase) -> DisclosureSpec:
        """The disclosure policy in force in ``phase`` (the challenge's, with its overrides)."""
        if phase.disclosure is None:
            return self.disclosure
        changes = {k: v for k, v in phase.disclosure.model_dump().items() if v is not None}
        return self.disclosure.model_copy(update=changes)

    def task(self, name: str) -> Task:
        """The task called ``name``."""
        return next(t for t in self.tasks if t.name == name)

    def phase(self, name: str | None) -> Phase:
        """The phase called ``name`` (its title or an alias too); the last one when None.

        An imported bundle's phase has its bundle index as an alias (``--phase 0``).
        """
        if name is None:
            return self.phases[-1]
        for phase in self.phases:
            if phase.name == name:
                return phase
        for phase in self.phases:
            if name == phase.title or name in phase.aliases:
                return phase
        known = ", ".join(p.name for p in self.phases)
        raise KeyError(f"no phase {name!r} in challenge {self.name!r} (phases: {known})")
