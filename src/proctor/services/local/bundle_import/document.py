"""What an import writes and answers: the typed ``challenge.yaml`` and the ``--json`` answer.

Every format builds a :class:`ChallengeDocument`; :func:`write_document` is the one place that
turns it into YAML (a field left None is not written). :class:`ImportResult` is the answer
``proctor challenge import`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import yaml
from pydantic import BaseModel, ConfigDict


class Block(BaseModel):
    """A block of the written ``challenge.yaml``: frozen, its keys in the order declared."""

    model_config = ConfigDict(frozen=True)


class Metric(Block):
    """A scorer's metric: its direction, and the column title it shows under."""

    direction: str
    description: str | None = None


class IngestionProgram(Block):
    """A task's ingestion program: in the exam (``wall_s``) or beside scoring (``input_data``)."""

    program: str
    command: list[str]
    wall_s: float | None = None
    input_data: str | None = None


class ProgramScorer(Block):
    """A scoring program run as Codabench's compute worker runs it (``scoring/program.py``)."""

    program: str
    command: list[str]
    metrics: dict[str, Metric]
    limits: dict[str, float]
    mounts: dict[str, str]
    scores_files: list[str]
    booleans: str = "numbers"
    strings: str = "numbers"
    detailed_page: str = "first_html"
    writable_inputs: bool = True
    missing_metrics: str = "empty"
    computed: dict[str, dict[str, Any]] | None = None
    score_keys: dict[str, str] | None = None
    concurrent_ingestion: IngestionProgram | None = None


class EvalaiScorer(Block):
    """An EvalAI script's ``evaluate`` for one phase and split (the ``evalai`` scorer)."""

    evalai: str
    phase: str
    split: str
    annotation: str
    labels: dict[str, str]
    metrics: dict[str, Metric]
    environment: Any
    phase_splits: list[str] | None = None


class Task(Block):
    """A task: its data folders and its scorer (and the kit's stand-in, if any)."""

    name: str
    title: str | None = None
    public_inputs: str
    hidden_inputs: str
    hidden_references: str
    scorer: ProgramScorer | EvalaiScorer
    kit: dict[str, dict[str, str]] | None = None


class Protocol(Block):
    """The protocol block: ``results``, ``ingestion`` (with programs) or ``single_file``."""

    kind: str
    programs: dict[str, IngestionProgram] | None = None
    submission_programs: dict[str, dict[str, float]] | None = None
    file_patterns: list[str] | None = None


class Board(Block):
    """A phase's leaderboard: its metrics (the first ranks), and whose tasks it shows."""

    name: str
    title: str | None = None
    tasks: list[str] | None = None
    metrics: list[str]
    public: bool | None = None


class Quota(Block):
    """A phase's submissions per day and in all."""

    per_day: int | None = None
    total: int | None = None


class Phase(Block):
    """A phase: its tasks, dates (ISO 8601), quota and boards."""

    name: str
    title: str
    tasks: list[str]
    aliases: list[str] | None = None
    opens: str | None = None
    closes: str | None = None
    quota: Quota | None = None
    leaderboards: list[Board] | None = None


class SubmissionField(Block):
    """A field a participant fills in with a submission (``spec.submission_fields``)."""

    name: str
    label: str
    description: str
    required: bool
    public: bool


class Registration(Block):
    """The ``registration:`` block (``spec.registration``): the mode, and the terms accepted."""

    mode: str
    terms: str | None = None


class ChallengeDocument(Block):
    """The ``challenge.yaml`` an import writes."""

    name: str
    title: str
    description: str
    protocol: Protocol
    tasks: list[Task]
    leaderboard: dict[str, str]
    environment: Any
    disclosure: dict[str, str] | None = None
    phases: list[Phase]
    precision: dict[str, int] | None = None
    submission_fields: list[SubmissionField] | None = None
    pages: dict[str, str] | None = None
    registration: Registration | None = None


def registration(approval: bool | None, terms: str | None) -> Registration | None:
    """The ``registration:`` block of an imported bundle, or None.

    ``approval``: whether an organizer approves each participant (Codabench's
    ``registration_auto_approve`` negated, EvalAI's ``approval_required``); None when the
    bundle does not say, which keeps Proctor's default (no registration). ``terms``: the
    imported terms page, if any, the terms people accept.
    """
    if approval is None:
        return None
    return Registration(mode="approval" if approval else "open", terms=terms)


def write_document(
    document: ChallengeDocument, dest: Path, header: str = "", width: int | None = 100
) -> None:
    """Write ``dest/challenge.yaml``: ``header`` (comments), then the document's YAML.

    ``width``: where PyYAML folds long lines (None: its own default, 80).
    """
    mapping = document.model_dump(exclude_none=True)
    text = header + yaml.safe_dump(mapping, sort_keys=False, allow_unicode=True, width=width)
    (dest / "challenge.yaml").write_text(text, encoding="utf-8")


class PhaseAnswer(TypedDict):
    """A phase in the answer (the bundle's name and index where the format has them)."""

    name: str
    title: str
    bundle_name: NotRequired[str]
    bundle_index: NotRequired[int | None]
    tasks: list[str]
    opens: str | None
    closes: str | None


class IngestionAnswer(TypedDict):
    """A task's ingestion program in the answer: its command, and whether it runs in scoring."""

    command: list[str]
    during_scoring: bool


class TaskAnswer(TypedDict):
    """A task in the answer: its scoring command, and its ingestion's if any."""

    name: str
    title: str
    command: NotRequired[list[str]]
    ingestion: NotRequired[IngestionAnswer]


class ColumnAnswer(TypedDict):
    """A board column in the answer (only ``key`` for an EvalAI board)."""

    key: str
    score_key: NotRequired[str]
    title: NotRequired[str]
    direction: NotRequired[str]
    precision: NotRequired[int | None]
    hidden: NotRequired[bool]
    computed: NotRequired[list[str] | None]


class BoardAnswer(TypedDict):
    """A leaderboard in the answer: its ranking metric and columns (EvalAI: its phase, name)."""

    phase: NotRequired[str]
    name: NotRequired[str]
    metric: str
    columns: list[ColumnAnswer]


class ImportAnswer(TypedDict):
    """The JSON object ``proctor challenge import --json`` prints."""

    challenge: str
    path: str
    format: str
    phases: list[PhaseAnswer]
    tasks: list[TaskAnswer]
    leaderboards: list[BoardAnswer]
    warnings: list[str]


@dataclass(frozen=True)
class Imported:
    """What a format builds from a bundle: the document to write, and the import's answer.

    ``header``: comment lines written above the YAML; ``width``: where PyYAML folds lines.
    """

    document: ChallengeDocument
    result: ImportResult
    header: str = ""
    width: int | None = 100


@dataclass
class ImportResult:
    """What an import made: the ``--json`` answer of ``proctor challenge import``."""

    challenge: str
    path: Path
    format: str
    phases: list[PhaseAnswer] = field(default_factory=list)
    tasks: list[TaskAnswer] = field(default_factory=list)
    leaderboards: list[BoardAnswer] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> ImportAnswer:
        """The JSON object the CLI prints."""
        return {
            "challenge": self.challenge,
            "path": str(self.path),
            "format": self.format,
            "phases": self.phases,
            "tasks": self.tasks,
            "leaderboards": self.leaderboards,
            "warnings": self.warnings,
        }
