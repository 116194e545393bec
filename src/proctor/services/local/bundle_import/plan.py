"""A bundle as Proctor sees it (tasks, phases, columns), and the ``challenge.yaml`` it becomes.

Each importer fills a :class:`BundlePlan` from its own YAML; :func:`write_challenge` turns
any plan into the challenge folder's ``challenge.yaml`` and the ``--json`` answer. The data
and programs are already copied under DEST by then (``programs/``, ``data/``, ``pages/``,
``baseline/`` and ``kit/solutions/``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from proctor.spec.display import MAX_PRECISION, PageName

CODABENCH_MOUNTS = {
    "program": "/app/program",
    "reference": "/app/input/ref",
    "outputs": "/app/input/res",
    "scores": "/app/output",
    "cases": "/app/cases.txt",
    "output": "/app/check/output",
    "shared": "/app/shared",
}
"""A scoring program's mount points as Codabench's compute worker lays the container out."""
SCORES_FILES = ("scores.json", "scores.txt")
"""What a Codabench scoring program writes, tried in this order (as the worker reads them)."""


@dataclass
class ImportResult:
    """What an import made: the ``--json`` answer of ``proctor challenge import``."""

    challenge: str
    path: Path
    format: str
    phases: list[dict[str, Any]] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)
    leaderboards: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
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


def registration_block(approval: bool | None, pages: dict[PageName, str]) -> dict[str, Any] | None:
    """The ``registration:`` block of an imported bundle (``spec.registration``), or None.

    ``approval``: whether an organizer approves each participant (Codabench's
    ``registration_auto_approve`` negated, EvalAI's ``approval_required``); None when the
    bundle does not say, which keeps Proctor's default (no registration). The imported terms
    page, if any, is the terms people accept.
    """
    if approval is None:
        return None
    block: dict[str, Any] = {"mode": "approval" if approval else "open"}
    if "terms" in pages:
        block["terms"] = pages["terms"]
    return block


DEFAULT_WALL_S = 600.0
"""A scoring program's seconds when the bundle names no ``execution_time_limit``."""


@dataclass
class Column:
    """A leaderboard column: the metric, its order, its precision, whether it shows.

    ``label``: the score key as the bundle writes it, where that is no metric name (``key``
    is then the metric name made from it).
    """

    key: str
    title: str
    label: str = ""
    direction: str = "higher"
    precision: int | None = None
    hidden: bool = False
    computation: tuple[str, tuple[str, ...]] | None = None


@dataclass
class TaskPlan:
    """One Proctor task: a bundle task (Codabench) or a phase's programs (CodaLab).

    ``ingestion``: its ingestion program run in the exam (``program``, ``command``,
    ``wall_s``); ``concurrent``: one run beside the scoring program (``program``,
    ``command``, ``input_data``).
    """

    name: str
    title: str
    program: str
    command: list[str]
    public_inputs: str
    hidden_inputs: str
    references: str
    wall_s: float = DEFAULT_WALL_S
    ingestion: dict[str, Any] | None = None
    concurrent: dict[str, Any] | None = None
    stand_in: dict[str, str] | None = None
    """The kit's public stand-in (``inputs``, ``references``: folders of the challenge)."""


@dataclass
class PhasePlan:
    """One phase: its title as the bundle writes it, dates, quotas, tasks."""

    name: str
    title: str
    tasks: list[str]
    opens: datetime | None = None
    closes: datetime | None = None
    per_day: int | None = None
    total: int | None = None
    bundle_name: str = ""
    bundle_index: int | None = None


@dataclass
class BundlePlan:
    """Everything an importer mapped, and its warnings."""

    format: str
    name: str
    title: str
    environment: Any
    description: str = ""
    tasks: list[TaskPlan] = field(default_factory=list)
    phases: list[PhasePlan] = field(default_factory=list)
    columns: list[Column] = field(default_factory=list)
    primary: str = ""
    board_title: str = ""
    pages: dict[PageName, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    takes_code: bool = False
    """The bundle takes code submissions (``code_evidence``): protocol ``ingestion``."""
    registration: dict[str, Any] | None = None
    """The ``registration:`` block (:func:`registration_block`); None: none asked."""


def _metrics(plan: BundlePlan) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for column in plan.columns:
        metrics[column.key] = {"direction": column.direction, "description": column.title}
    return metrics


def _precision(plan: BundlePlan) -> dict[str, int]:
    """The columns' digits as the top-level ``precision:`` (``spec.display``) reads them."""
    return {
        column.key: min(max(column.precision, 0), MAX_PRECISION)
        for column in plan.columns
        if column.precision is not None
    }


def _computed(plan: BundlePlan) -> dict[str, Any]:
    return {
        column.key: {"operation": column.computation[0], "of": list(column.computation[1])}
        for column in plan.columns
        if column.computation is not None
    }


def _task(plan: BundlePlan, task: TaskPlan) -> dict[str, Any]:
    scorer: dict[str, Any] = {
        "program": task.program,
        "command": task.command,
        "metrics": _metrics(plan),
        "limits": {"wall_s": task.wall_s},
        "mounts": dict(CODABENCH_MOUNTS),
        "scores_files": list(SCORES_FILES),
        "booleans": "numbers",
        "strings": "numbers",
        "detailed_page": "first_html",
        "writable_inputs": True,
        "missing_metrics": "empty",
    }
    computed = _computed(plan)
    if computed:
        scorer["computed"] = computed
    labels = {column.key: column.label for column in plan.columns if column.label}
    if labels:
        scorer["score_keys"] = labels
    if task.concurrent is not None:
        scorer["concurrent_ingestion"] = task.concurrent
    mapping = {
        "name": task.name,
        "title": task.title,
        "public_inputs": task.public_inputs,
        "hidden_inputs": task.hidden_inputs,
        "hidden_references": task.references,
        "scorer": scorer,
    }
    if task.stand_in is not None:
        mapping["kit"] = {"stand_in": dict(task.stand_in)}
    return mapping


def _phase(plan: BundlePlan, phase: PhasePlan) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": phase.name, "title": phase.title, "tasks": phase.tasks}
    if phase.bundle_index is not None:
        entry["aliases"] = [str(phase.bundle_index)]
    if phase.opens is not None:
        entry["opens"] = phase.opens.isoformat()
    if phase.closes is not None:
        entry["closes"] = phase.closes.isoformat()
    quota = {
        key: value
        for key, value in (("per_day", phase.per_day), ("total", phase.total))
        if value is not None
    }
    if quota:
        entry["quota"] = quota
    shown = [column.key for column in plan.columns if not column.hidden]
    if shown and plan.primary in shown:
        ordered = [plan.primary, *(key for key in shown if key != plan.primary)]
        entry["leaderboards"] = [
            {"name": "results", "title": plan.board_title or "Results", "metrics": ordered}
        ]
    return entry


def _protocol(plan: BundlePlan) -> dict[str, Any]:
    """The protocol block: ``results``, or ``ingestion`` when the bundle takes code.

    Under ``ingestion`` a task without an exam-time ingestion program (nor one beside scoring)
    takes submission programs: an upload naming its own command runs as the task's program
    within the task's time limit; any other upload is its output, as under ``results``.
    """
    programs = {task.name: task.ingestion for task in plan.tasks if task.ingestion is not None}
    if not programs and not plan.takes_code:
        return {"kind": "results"}
    own = {
        task.name: {"wall_s": task.wall_s}
        for task in plan.tasks
        if task.ingestion is None and task.concurrent is None
    }
    block: dict[str, Any] = {"kind": "ingestion", "programs": programs}
    if own:
        block["submission_programs"] = own
    return block


def challenge_mapping(plan: BundlePlan) -> dict[str, Any]:
    """The ``challenge.yaml`` mapping of a plan."""
    mapping: dict[str, Any] = {
        "name": plan.name,
        "title": plan.title,
        "description": plan.description,
        "protocol": _protocol(plan),
        "tasks": [_task(plan, task) for task in plan.tasks],
        "leaderboard": {"metric": plan.primary},
        "environment": plan.environment,
        "disclosure": {"per_record": "none"},
        "phases": [_phase(plan, phase) for phase in plan.phases],
    }
    precision = _precision(plan)
    if precision:
        mapping["precision"] = precision
    if plan.pages:
        mapping["pages"] = plan.pages
    if plan.registration is not None:
        mapping["registration"] = plan.registration
    return mapping


HEADER = """\
# Imported from a {format} bundle by `proctor challenge import` (docs/import-bundles.md).
# The programs run as Codabench's compute worker runs them: an ingestion program (protocol
# `ingestion`) with /app/program, /app/input_data, /app/ingested_program (the upload),
# /app/output, /app/shared; an upload naming its own command (`submission_programs`) with
# /app/program (the upload), /app/input_data, /app/output; a scoring program with
# /app/program (the working folder), /app/input/ref, /app/input/res (the upload, or what
# ingestion wrote), /app/output (scores.json or scores.txt), /app/shared.
"""


def _task_answer(task: TaskPlan) -> dict[str, Any]:
    """A task in the ``--json`` answer: its scoring command, and its ingestion's if any."""
    answer: dict[str, Any] = {"name": task.name, "title": task.title, "command": task.command}
    ingestion = task.ingestion or task.concurrent
    if ingestion is not None:
        answer["ingestion"] = {
            "command": ingestion["command"],
            "during_scoring": task.concurrent is not None,
        }
    return answer


def write_challenge(plan: BundlePlan, dest: Path) -> ImportResult:
    """Write ``dest/challenge.yaml`` and return the import's answer."""
    mapping = challenge_mapping(plan)
    text = HEADER.format(format=plan.format) + yaml.safe_dump(
        mapping, sort_keys=False, allow_unicode=True, width=100
    )
    (dest / "challenge.yaml").write_text(text, encoding="utf-8")
    return ImportResult(
        challenge=plan.name,
        path=dest,
        format=plan.format,
        phases=[
            {
                "name": phase.name,
                "title": phase.title,
                "bundle_name": phase.bundle_name,
                "bundle_index": phase.bundle_index,
                "tasks": phase.tasks,
                "opens": phase.opens.isoformat() if phase.opens else None,
                "closes": phase.closes.isoformat() if phase.closes else None,
            }
            for phase in plan.phases
        ],
        tasks=[_task_answer(task) for task in plan.tasks],
        leaderboards=[
            {
                "metric": plan.primary,
                "columns": [
                    {
                        "key": column.key,
                        "score_key": column.label or column.key,
                        "title": column.title,
                        "direction": column.direction,
                        "precision": column.precision,
                        "hidden": column.hidden,
                        "computed": list(column.computation[1]) if column.computation else None,
                    }
                    for column in plan.columns
                ],
            }
        ],
        warnings=plan.warnings,
    )
