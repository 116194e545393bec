"""CodaLab v1/v1.5 (``competition.yaml`` without ``version: 2``) → a Proctor challenge plan.

Each phase names its own ``scoring_program`` and ``reference_data`` (zips with a ``metadata``
file), so each phase is one Proctor task of that phase. A phase ends where the next starts
(the last at the competition's ``end_date``). Columns are a mapping under
``leaderboard.columns``, ordered by ``rank``, ``numeric_format`` their precision.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from proctor.services.local.bundle_import.code_evidence import codalab_evidence, note_code
from proctor.services.local.bundle_import.columns import board_mappings, read_columns
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
    number,
    parse_date,
    text,
    whole,
)

FORMAT = "codalab-v1"


def detect(spec: Any) -> bool:
    """True for a CodaLab bundle's YAML: phases, and no ``version: 2``."""
    return isinstance(spec, dict) and "phases" in spec and str(spec.get("version", "1")) != "2"


def _phases(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    phases = spec.get("phases")
    if isinstance(phases, dict):
        items = [(f"phases.{key}", value) for key, value in phases.items()]
    elif isinstance(phases, list):
        items = [(f"phases[{i}]", value) for i, value in enumerate(phases)]
    else:
        raise BundleRefusedError("must be a mapping of phases", location="phases")
    for key, phase in items:
        if not isinstance(phase, dict):
            raise BundleRefusedError("must be a mapping", location=key)
    return sorted(
        items, key=lambda item: whole(item[1].get("phasenumber", 0) or 0, f"{item[0]}.phasenumber")
    )


def _without_parents(
    phases: list[tuple[str, dict[str, Any]]], warnings: list[str]
) -> list[tuple[str, dict[str, Any]]]:
    """CodaLab 1.8's parallel phases: the parent (``is_parallel_parent``) only groups them.

    Codabench drops it when it imports such a bundle; so does Proctor, with a warning.
    """
    kept = []
    for key, phase in phases:
        if phase.get("is_parallel_parent"):
            warnings.append(
                f"{key}.is_parallel_parent: a CodaLab 1.8 parent phase only groups the phases "
                "that name it (parent_phasenumber): left out, its children are the phases"
            )
            continue
        kept.append((key, phase))
    return kept


V1_TASK_KEYS = {"ingestion_program_only_during_scoring": "ingestion_only_during_scoring"}
"""A v1 phase's keys for what Codabench's tasks spell otherwise (its v1 import maps them so)."""


def _v2_keys(phase: dict[str, Any]) -> dict[str, Any]:
    """``phase`` with its v1 spellings also under the v2 task keys (the v1 spelling wins)."""
    mapped = dict(phase)
    for old, new in V1_TASK_KEYS.items():
        if old in phase:
            mapped[new] = phase[old]
    return mapped


def _note_hidden_results(key: str, phase: dict[str, Any], warnings: list[str]) -> None:
    mode = str(phase.get("leaderboard_management_mode") or "default").lower()
    if mode == "hide_results":
        warnings.append(
            f"{key}.leaderboard_management_mode hide_results: Proctor's boards show the "
            "phase's results while it runs (there is no hide-until-the-end mode); a board of "
            "the phase with `public: false` is seen by organizers only"
        )


def build_plan(spec: dict[str, Any], bundle: Path, dest: Path, environment: Any) -> BundlePlan:
    """Map the bundle's YAML, copying its programs, data and pages under ``dest``."""
    title = text(spec.get("title"), "title") or bundle.name
    plan = BundlePlan(
        format=FORMAT,
        name=derive_name(title, set(), "imported"),
        title=title,
        environment=environment,
        description=text(spec.get("description"), "description")[:2000],
    )
    phases = [
        (key, _v2_keys(phase)) for key, phase in _without_parents(_phases(spec), plan.warnings)
    ]
    if not phases:
        raise BundleRefusedError("the bundle declares no phase", location="phases")
    opens = [parse_date(phase.get("start_date"), f"{key}.start_date") for key, phase in phases]
    closes = _closing_times(opens, parse_date(spec.get("end_date"), "end_date"))
    code, sample = codalab_evidence(phases, bundle)
    _phase_and_task_plans(
        plan, phases, (bundle, dest), (opens, closes), takes_code=code is not None
    )
    note_code(plan, code)
    _copy_kit(bundle, dest, phases, sample, plan.warnings)
    note_network_use(dest, sorted((dest / "programs").iterdir()), plan.warnings)
    note_participant_code(dest, sorted((dest / "programs").iterdir()), plan.warnings)
    _leaderboard(plan, spec.get("leaderboard") or {})
    html = spec.get("html") or {}
    pages = [
        (text(title, "html").title(), text(file, f"html.{title}"))
        for title, file in html.items()
        if file
    ]
    plan.pages = copy_pages(bundle, pages, dest, plan.warnings)
    note_detailed_results(plan, spec)
    return plan


def _phase_and_task_plans(
    plan: BundlePlan,
    phases: list[tuple[str, dict[str, Any]]],
    places: tuple[Path, Path],
    times: tuple[list[datetime | None], list[datetime | None]],
    *,
    takes_code: bool,
) -> None:
    """Each v1 phase as a phase of one task (its program and data copied to ``dest``)."""
    bundle, dest = places
    opens, closes = times
    taken: set[str] = set()
    for position, (key, phase) in enumerate(phases):
        _note_hidden_results(key, phase, plan.warnings)
        label = text(phase.get("label"), f"{key}.label") or f"Phase {position + 1}"
        name = derive_name(label, taken, f"phase-{position + 1}")
        limit = phase.get("execution_time_limit")
        wall_s = number(limit, f"{key}.execution_time_limit") if limit not in (None, "") else None
        plan.tasks.append(
            task_plan(
                bundle,
                dest,
                {**phase, "name": label},
                key=key,
                name=name,
                wall_s=wall_s,
                warnings=plan.warnings,
                public_data=phase.get("public_data"),
                takes_code=takes_code,
            )
        )
        plan.phases.append(
            PhasePlan(
                name=name,
                title=label,
                tasks=[name],
                opens=opens[position],
                closes=closes[position],
                per_day=_positive(phase, "max_submissions_per_day", key),
                total=_positive(phase, "max_submissions", key),
                bundle_name=label,
                bundle_index=whole(
                    phase.get("phasenumber", position + 1) or position + 1, f"{key}.phasenumber"
                ),
            )
        )


def _leaderboard(plan: BundlePlan, board: Any) -> None:
    """The v1 ``leaderboard``'s columns (a ``< Rank >`` average noted)."""
    if not isinstance(board, dict):
        raise BundleRefusedError("must be a mapping", location="leaderboard")
    _note_rank_averages(board, plan.warnings)
    found = [_columns_v1(each, where) for each, where in board_mappings([board], "leaderboard")]
    read_columns(plan, [board], found, "leaderboard")


def _copy_kit(
    bundle: Path,
    dest: Path,
    phases: list[tuple[str, dict[str, Any]]],
    sample: str | None,
    warnings: list[str],
) -> None:
    """The phases' ``starting_kit`` and ``public_data`` in the kit.

    A sample code submission (a starting kit that is a program) is also ``baseline/``, the
    kit's ``entry/``.
    """
    kit = {
        key: text(phase[key], f"{where}.{key}")
        for where, phase in phases
        for key in ("starting_kit", "public_data")
        if phase.get(key)
    }
    copy_kit_folders(bundle, dest, kit, warnings)
    if sample is not None:
        copy_solutions(bundle, dest, [sample], warnings)


def _closing_times(opens: list[datetime | None], end: datetime | None) -> list[datetime | None]:
    """A phase ends where the next later phase starts, the last at the competition's end.

    Phases starting together (CodaLab 1.8's parallel phases, the children of one parent) run
    side by side: each ends where the first phase starting after them starts.
    """
    closes: list[datetime | None] = []
    for position, start in enumerate(opens):
        later = [
            moment
            for moment in opens[position + 1 :]
            if moment is not None and (start is None or moment > start)
        ]
        closes.append(later[0] if later else end)
    return closes


def _positive(phase: dict[str, Any], name: str, key: str) -> int | None:
    """The phase's ``name`` when it is a number above 0, else None."""
    value = phase.get(name)
    found = whole(value, f"{key}.{name}") if value not in (None, "") else 0
    return found if found > 0 else None


def _fields(value: Any) -> list[str]:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [str(part) for part in value or []]


def _computed(value: Any) -> bool:
    return isinstance(value, dict) and bool(value.get("computed"))


def _note_rank_averages(board: dict[str, Any], warnings: list[str]) -> None:
    """CodaLab v1's ``computed`` columns average ranks, which no one submission's scores give.

    CodaLab ranked every submission of the phase on each field, then averaged those ranks
    (the ``< Rank >`` column of AutoML bundles); Codabench's v1 import drops such columns.
    Proctor leaves them out too, and ranks on the next column.
    """
    columns = board.get("columns") if isinstance(board.get("columns"), dict) else {}
    for name, column in (columns or {}).items():
        if _computed(column):
            computed = column["computed"]
            fields = ", ".join(
                _fields(computed.get("fields") if isinstance(computed, dict) else [])
            )
            warnings.append(
                f"leaderboard.columns.{name}.computed: CodaLab averaged the ranks of {fields} "
                "among the phase's submissions; no submission's own scores give it, so the "
                "column is left out (as Codabench does) and the board ranks on the next column "
                "(a board with `aggregation: mean_rank` over tasks is Proctor's rank average)"
            )


def _columns_v1(board: dict[str, Any], key: str) -> list[tuple[dict[str, Any], str]]:
    """The ``columns`` mapping in Codabench's form, ordered by ``rank`` (rank averages left out)."""
    columns = board.get("columns") or {}
    if not isinstance(columns, dict):
        raise BundleRefusedError("must be a mapping of columns", location=f"{key}.columns")
    found = []
    for position, (name, value) in enumerate(columns.items()):
        column: dict[str, Any] = value if isinstance(value, dict) else {}
        if _computed(column):
            continue
        normalized = {
            "index": position,
            "key": name,
            "title": column.get("label") or name,
            "sorting": column.get("sort"),
            "said": "sort",  # where the bundle would give the direction
            "precision": column.get("numeric_format"),
            "hidden": column.get("hidden", False),
            "rank": column.get("rank", position + 1),
        }
        found.append((normalized, f"{key}.columns.{name}"))
    found.sort(key=lambda item: whole(item[0]["rank"] or 0, f"{item[1]}.rank"))
    for position, (column, _) in enumerate(found):
        column["index"] = position
    return found
