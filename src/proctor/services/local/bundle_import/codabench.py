"""Codabench (``competition.yaml`` with ``version: 2``) → a Proctor challenge plan.

Phases reference tasks by index; a task names its ``scoring_program``, ``reference_data`` and
``input_data`` (folders or zips of the bundle); the leaderboard's columns name the score keys.
A phase with several tasks becomes several Proctor tasks of one phase.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proctor.services.local.bundle_import.code_evidence import codabench_evidence, note_code
from proctor.services.local.bundle_import.columns import board_mappings, read_columns
from proctor.services.local.bundle_import.document import registration
from proctor.services.local.bundle_import.naming import derive_name
from proctor.services.local.bundle_import.network import note_network_use
from proctor.services.local.bundle_import.pages import copy_pages
from proctor.services.local.bundle_import.participant_code import note_participant_code
from proctor.services.local.bundle_import.plan import BundlePlan, PhasePlan, note_detailed_results
from proctor.services.local.bundle_import.programs import (
    copy_kit_folders,
    copy_solutions,
    task_plan,
)
from proctor.services.local.bundle_import.reading import (
    BundleRefusedError,
    flag,
    number,
    parse_date,
    text,
    whole,
)

FORMAT = "codabench-v2"
RULES_KEPT = (None, "", "Force_Best")
"""``submission_rule`` values Proctor's board (each team's best submission) equals."""


def detect(spec: Any) -> bool:
    """True for a Codabench bundle's YAML: ``version: 2``, or no version and a list of tasks.

    Early Codabench bundles wrote no ``version``; a top-level ``tasks`` list (and a list of
    phases naming them) is v2's shape, which CodaLab v1 never has.
    """
    if not isinstance(spec, dict):
        return False
    version = str(spec.get("version", "")).strip()
    if version in ("2", "2.0"):
        return True
    return _unversioned_v2(spec)


def _unversioned_v2(spec: dict[str, Any]) -> bool:
    return (
        "version" not in spec
        and isinstance(spec.get("tasks"), list)
        and isinstance(spec.get("phases"), list)
    )


def _list(spec: dict[str, Any], key: str) -> list[Any]:
    value = spec.get(key) or []
    if not isinstance(value, list):
        raise BundleRefusedError("must be a list", location=key)
    return value


def _by_index(items: list[Any], key: str) -> dict[int, dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            raise BundleRefusedError("must be a mapping", location=f"{key}[{position}]")
        found[whole(item.get("index", position), f"{key}[{position}].index")] = item
    return found


def build_plan(spec: dict[str, Any], bundle: Path, dest: Path, environment: Any) -> BundlePlan:
    """Map the bundle's YAML, copying its programs, data, pages and solutions under ``dest``."""
    title = text(spec.get("title"), "title") or bundle.name
    plan = BundlePlan(
        format=FORMAT,
        name=derive_name(title, set(), "imported"),
        title=title,
        environment=environment,
        description=text(spec.get("description"), "description")[:2000],
    )
    if _unversioned_v2(spec):
        plan.warnings.append(
            "version: none written: read as a Codabench v2 bundle (it lists tasks and phases); "
            "add `version: 2`"
        )
    tasks = _by_index(_list(spec, "tasks"), "tasks")
    phases = _list(spec, "phases")
    if not phases:
        raise BundleRefusedError("the bundle declares no phase", location="phases")
    per_task = (_time_limits(phases), _public_data(phases))
    code = codabench_evidence(spec, bundle)
    task_names = _tasks(plan, tasks, (bundle, dest), per_task, takes_code=code is not None)
    note_code(plan, code)
    note_network_use(dest, sorted((dest / "programs").iterdir()), plan.warnings)
    note_participant_code(dest, sorted((dest / "programs").iterdir()), plan.warnings)
    _phases(plan, phases, task_names)
    _leaderboards(plan, _list(spec, "leaderboards"))
    _pages_kit_and_solutions(plan, spec, (bundle, dest), phases)
    _registration(plan, spec)
    note_detailed_results(plan, spec)
    return plan


def _registration(plan: BundlePlan, spec: dict[str, Any]) -> None:
    """``registration_auto_approve`` as the registration mode (``open`` or ``approval``).

    Codabench approves each participant unless the bundle says otherwise; a bundle that does
    not say is imported without registration (everyone signed in takes part), and warned.
    """
    if "registration_auto_approve" not in spec:
        plan.warnings.append(
            "registration_auto_approve: not set (Codabench then asks organizers to approve each "
            "participant): imported without registration; add `registration: {mode: approval}` "
            "to challenge.yaml to ask for it"
        )
        return
    auto = flag(spec["registration_auto_approve"], "registration_auto_approve")
    plan.registration = registration(not auto, plan.pages.get("terms"))


def _tasks(
    plan: BundlePlan,
    tasks: dict[int, dict[str, Any]],
    places: tuple[Path, Path],
    per_task: tuple[dict[int, float], dict[int, str]],
    *,
    takes_code: bool,
) -> dict[int, str]:
    """Each task's plan (its program and data copied from the bundle to ``dest``), by index.

    ``per_task``: the time limits and the public data of the phases running each task.
    """
    bundle, dest = places
    limits, samples = per_task
    task_names: dict[int, str] = {}
    taken: set[str] = set()
    for index, task in sorted(tasks.items()):
        named = text(task.get("name"), f"tasks[{index}].name") or f"task-{index}"
        name = derive_name(named, taken, f"task-{index}")
        task_names[index] = name
        plan.tasks.append(
            task_plan(
                bundle,
                dest,
                task,
                key=f"tasks[{index}]",
                name=name,
                wall_s=limits.get(index),
                warnings=plan.warnings,
                public_data=samples.get(index),
                takes_code=takes_code,
            )
        )
    return task_names


def _leaderboards(plan: BundlePlan, boards: list[Any]) -> None:
    """The columns of every board; a ``submission_rule`` Proctor has no equivalent of, warned."""
    found = [_columns_v2(each, where) for each, where in board_mappings(boards, "leaderboards")]
    read_columns(plan, boards, found, "leaderboards")
    rule = next((board.get("submission_rule") for board in boards), None)
    if rule not in RULES_KEPT:
        plan.warnings.append(
            f"leaderboards[0].submission_rule {rule!r}: Proctor's board shows each team's best "
            "submission (Force_Best); participants choose their final entries with "
            "`proctor final`"
        )


def _pages_kit_and_solutions(
    plan: BundlePlan, spec: dict[str, Any], places: tuple[Path, Path], phases: list[Any]
) -> None:
    """Copy the pages (terms among them), the phases' kit folders and the solutions."""
    bundle, dest = places
    pages = [
        (
            text(page.get("title"), f"pages[{index}].title") or text(page["file"], "pages"),
            text(page["file"], f"pages[{index}].file"),
        )
        for index, page in enumerate(_list(spec, "pages"))
        if isinstance(page, dict) and page.get("file")
    ]
    if spec.get("terms"):
        pages.append(("Terms", text(spec["terms"], "terms")))
    plan.pages = copy_pages(bundle, pages, dest, plan.warnings)
    kit = {
        key: text(phase[key], f"phases[{position}].{key}")
        for position, phase in enumerate(phases)
        if isinstance(phase, dict)
        for key in ("starting_kit", "public_data")
        if phase.get(key)
    }
    copy_kit_folders(bundle, dest, kit, plan.warnings)
    copy_solutions(
        bundle,
        dest,
        [
            text(item.get("path"), f"solutions[{index}].path")
            for index, item in enumerate(_list(spec, "solutions"))
            if isinstance(item, dict)
        ],
        plan.warnings,
    )


def _time_limits(phases: list[Any]) -> dict[int, float]:
    """Per task index: the longest ``execution_time_limit`` of the phases running it."""
    limits: dict[int, float] = {}
    for position, phase in enumerate(phases):
        if not isinstance(phase, dict) or phase.get("execution_time_limit") in (None, ""):
            continue
        key = f"phases[{position}]"
        seconds = number(phase["execution_time_limit"], f"{key}.execution_time_limit")
        for index in _task_indexes(phase, key):
            limits[index] = max(seconds, limits.get(index, 0.0))
    return limits


def _public_data(phases: list[Any]) -> dict[int, str]:
    """Per task index: the ``public_data`` (sample data) of the first phase running it."""
    found: dict[int, str] = {}
    for position, phase in enumerate(phases):
        if isinstance(phase, dict) and phase.get("public_data"):
            data = text(phase["public_data"], f"phases[{position}].public_data")
            for index in _task_indexes(phase, f"phases[{position}]"):
                found.setdefault(index, data)
    return found


def _phases(plan: BundlePlan, phases: list[Any], task_names: dict[int, str]) -> None:
    taken: set[str] = set()
    for position, phase in enumerate(phases):
        key = f"phases[{position}]"
        if not isinstance(phase, dict):
            raise BundleRefusedError("must be a mapping", location=key)
        bundle_name = text(phase.get("name"), f"{key}.name") or f"Phase {position + 1}"
        names = []
        for index in _task_indexes(phase, key):
            if index not in task_names:
                raise BundleRefusedError(f"no task has index {index}", location=f"{key}.tasks")
            names.append(task_names[index])
        if not names:
            raise BundleRefusedError("the phase runs no task", location=f"{key}.tasks")
        opens = parse_date(phase.get("start"), f"{key}.start")
        closes = parse_date(phase.get("end"), f"{key}.end")
        if opens is not None and closes is not None and closes <= opens:
            raise BundleRefusedError(
                f"the phase ends ({closes.isoformat()}) before it starts ({opens.isoformat()}): "
                "correct start or end (dates are month first: 1-31-2026)",
                location=f"{key}.end",
            )
        plan.phases.append(
            PhasePlan(
                name=derive_name(bundle_name, taken, f"phase-{position + 1}"),
                title=bundle_name,
                tasks=names,
                opens=opens,
                closes=closes,
                per_day=_positive(phase, "max_submissions_per_day", key),
                total=_positive(phase, "max_submissions", key),
                bundle_name=bundle_name,
                bundle_index=whole(phase.get("index", position), f"{key}.index"),
            )
        )
        if phase.get("hide_output"):
            plan.warnings.append(
                f"{key}.hide_output: kept as Proctor's rule (a scoring program's output is never "
                "shown to participants)"
            )


def _positive(phase: dict[str, Any], name: str, key: str) -> int | None:
    """The phase's ``name`` when it is a number above 0, else None."""
    value = phase.get(name)
    found = whole(value, f"{key}.{name}") if value not in (None, "") else 0
    return found if found > 0 else None


def _task_indexes(phase: dict[str, Any], key: str) -> list[int]:
    """The indexes of the phase's ``tasks``, each a whole number."""
    tasks = phase.get("tasks") or []
    if not isinstance(tasks, list):
        raise BundleRefusedError("must be a list of task indexes", location=f"{key}.tasks")
    return [whole(index, f"{key}.tasks") for index in tasks]


def _columns_v2(board: dict[str, Any], key: str) -> list[tuple[dict[str, Any], str]]:
    columns = board.get("columns") or []
    return [(column, f"{key}.columns[{i}]") for i, column in enumerate(columns)]
