"""A bundle as Proctor sees it (tasks, phases, columns), and the ``challenge.yaml`` it becomes.

Each importer fills a :class:`BundlePlan` from its own YAML; :func:`plan_import` turns any
plan into the challenge folder's ``challenge.yaml`` (a :class:`.document.ChallengeDocument`)
and the ``--json`` answer. The data
and programs are already copied under DEST by then (``programs/``, ``data/``, ``pages/``,
``baseline/`` and ``kit/solutions/``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from proctor.services.local.bundle_import.document import (
    Board,
    ChallengeDocument,
    Imported,
    ImportResult,
    IngestionProgram,
    Metric,
    Phase,
    ProgramScorer,
    Protocol,
    Quota,
    Registration,
    Task,
    TaskAnswer,
)
from proctor.services.local.bundle_import.reading import flag
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
    ingestion: IngestionProgram | None = None
    concurrent: IngestionProgram | None = None
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
    registration: Registration | None = None
    """The ``registration:`` block (:func:`.document.registration`); None: none asked."""
    detailed_for_teams: bool = False
    """``enable_detailed_results``: teams read the detailed page with their scores."""


def note_detailed_results(plan: BundlePlan, spec: dict[str, Any]) -> None:
    """Codabench's ``enable_detailed_results: True``: teams read the scoring program's page.

    Written as ``disclosure: {detailed_results: scores}`` (the page reaches the team with its
    scores, as on Codabench), and warned: the page shows whatever the program wrote in it.
    """
    key = "enable_detailed_results"
    if key not in spec or not flag(spec[key], key):
        return
    plan.detailed_for_teams = True
    plan.warnings.append(
        f"{key}: True: each team reads the scoring program's detailed results page "
        "(detailed_results.html) with its scores, as on Codabench "
        "(`disclosure: {detailed_results: scores}`); the page may carry whatever its program "
        "writes, per-case values or the references among it: check the program, or set "
        "`detailed_results: per_record` to show it only with `per_record: full`"
    )


def _metrics(plan: BundlePlan) -> dict[str, Metric]:
    return {
        column.key: Metric(direction=column.direction, description=column.title)
        for column in plan.columns
    }


def _precision(plan: BundlePlan) -> dict[str, int]:
    """The columns' digits as the top-level ``precision:`` (``spec.display``) reads them."""
    return {
        column.key: min(max(column.precision, 0), MAX_PRECISION)
        for column in plan.columns
        if column.precision is not None
    }


def _task(plan: BundlePlan, task: TaskPlan) -> Task:
    computed = {
        column.key: {"operation": column.computation[0], "of": list(column.computation[1])}
        for column in plan.columns
        if column.computation is not None
    }
    labels = {column.key: column.label for column in plan.columns if column.label}
    scorer = ProgramScorer(
        program=task.program,
        command=task.command,
        metrics=_metrics(plan),
        limits={"wall_s": task.wall_s},
        mounts=dict(CODABENCH_MOUNTS),
        scores_files=list(SCORES_FILES),
        computed=computed or None,
        score_keys=labels or None,
        concurrent_ingestion=task.concurrent,
    )
    return Task(
        name=task.name,
        title=task.title,
        public_inputs=task.public_inputs,
        hidden_inputs=task.hidden_inputs,
        hidden_references=task.references,
        scorer=scorer,
        kit=None if task.stand_in is None else {"stand_in": dict(task.stand_in)},
    )


def _phase(plan: BundlePlan, phase: PhasePlan) -> Phase:
    quota = Quota(per_day=phase.per_day, total=phase.total)
    shown = [column.key for column in plan.columns if not column.hidden]
    boards = None
    if shown and plan.primary in shown:
        ordered = [plan.primary, *(key for key in shown if key != plan.primary)]
        boards = [Board(name="results", title=plan.board_title or "Results", metrics=ordered)]
    return Phase(
        name=phase.name,
        title=phase.title,
        tasks=phase.tasks,
        aliases=None if phase.bundle_index is None else [str(phase.bundle_index)],
        opens=None if phase.opens is None else phase.opens.isoformat(),
        closes=None if phase.closes is None else phase.closes.isoformat(),
        quota=quota if phase.per_day is not None or phase.total is not None else None,
        leaderboards=boards,
    )


def _protocol(plan: BundlePlan) -> Protocol:
    """The protocol block: ``results``, or ``ingestion`` when the bundle takes code.

    Under ``ingestion`` a task without an exam-time ingestion program (nor one beside scoring)
    takes submission programs: an upload naming its own command runs as the task's program
    within the task's time limit; any other upload is its output, as under ``results``.
    """
    programs = {task.name: task.ingestion for task in plan.tasks if task.ingestion is not None}
    if not programs and not plan.takes_code:
        return Protocol(kind="results")
    own = {
        task.name: {"wall_s": task.wall_s}
        for task in plan.tasks
        if task.ingestion is None and task.concurrent is None
    }
    return Protocol(kind="ingestion", programs=programs, submission_programs=own or None)


def challenge_document(plan: BundlePlan) -> ChallengeDocument:
    """The ``challenge.yaml`` of a plan."""
    return ChallengeDocument(
        name=plan.name,
        title=plan.title,
        description=plan.description,
        protocol=_protocol(plan),
        tasks=[_task(plan, task) for task in plan.tasks],
        leaderboard={"metric": plan.primary},
        environment=plan.environment,
        disclosure={
            "per_record": "none",
            **({"detailed_results": "scores"} if plan.detailed_for_teams else {}),
        },
        phases=[_phase(plan, phase) for phase in plan.phases],
        precision=_precision(plan) or None,
        pages=dict(plan.pages) or None,
        registration=plan.registration,
    )


HEADER = """\
# Imported from a {format} bundle by `proctor challenge import` (docs/import-bundles.md).
# The programs run as Codabench's compute worker runs them: an ingestion program (protocol
# `ingestion`) with /app/program, /app/input_data, /app/ingested_program (the upload),
# /app/output, /app/shared; an upload naming its own command (`submission_programs`) with
# /app/program (the upload), /app/input_data, /app/output; a scoring program with
# /app/program (the working folder), /app/input/ref, /app/input/res (the upload, or what
# ingestion wrote), /app/output (scores.json or scores.txt), /app/shared.
"""


def _task_answer(task: TaskPlan) -> TaskAnswer:
    """A task in the ``--json`` answer: its scoring command, and its ingestion's if any."""
    answer: TaskAnswer = {"name": task.name, "title": task.title, "command": task.command}
    ingestion = task.ingestion or task.concurrent
    if ingestion is not None:
        answer["ingestion"] = {
            "command": ingestion.command,
            "during_scoring": task.concurrent is not None,
        }
    return answer


def plan_import(plan: BundlePlan, dest: Path) -> Imported:
    """The plan's ``challenge.yaml`` document and the import's answer (DEST: the folder)."""
    result = ImportResult(
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
    return Imported(challenge_document(plan), result, header=HEADER.format(format=plan.format))
