"""A bundle task's files under DEST, its scoring command, its columns and sample submissions.

Shared by the Codabench and CodaLab importers: programs land in ``programs/TASK``, data in
``data/TASK/{input_data,reference}`` (with an empty ``hidden`` folder: no code runs on hidden
inputs in a result submission), solutions in ``kit/solutions/`` and the first as ``baseline/``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from proctor.services.local.bundle_import.common import (
    BundleRefusedError,
    materialize,
    metric_key_problem,
    program_command,
)
from proctor.services.local.bundle_import.plan import DEFAULT_WALL_S, BundlePlan, Column, TaskPlan

OPERATIONS = {
    "avg": "avg",
    "average": "avg",
    "mean": "avg",
    "sum": "sum",
    "min": "min",
    "max": "max",
}
DEFAULT_PRECISION = 2
"""Codabench's ``precision`` (CodaLab's ``numeric_format``) of a column that gives none."""
EMPTY_NOTE = "No files: on Codabench this task has no {what}.\n"


def _empty(folder: Path, what: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "README.txt").write_text(EMPTY_NOTE.format(what=what), encoding="utf-8")
    return folder.as_posix()


def _program_root(folder: Path) -> Path:
    """The folder holding ``metadata``: ``folder`` or its only sub-folder (a zipped folder)."""
    if any((folder / name).is_file() for name in ("metadata", "metadata.yaml")):
        return folder
    subfolders = [item for item in folder.iterdir() if item.is_dir() and item.name != "__MACOSX"]
    if len(subfolders) == 1:
        return subfolders[0]
    return folder


def task_plan(
    bundle: Path,
    dest: Path,
    task: dict[str, Any],
    *,
    key: str,
    name: str,
    wall_s: float | None,
    warnings: list[str],
) -> TaskPlan:
    """Copy a task's scoring program and data under ``dest``; its plan."""
    if not task.get("scoring_program"):
        raise BundleRefusedError(
            "a task needs a scoring program", location=f"{key}.scoring_program"
        )
    program = materialize(
        bundle, task["scoring_program"], dest / "programs" / name, f"{key}.scoring_program"
    )
    root = _program_root(program)
    command = program_command(root, f"{key}.scoring_program", scoring=True)
    data = dest / "data" / name
    if task.get("reference_data"):
        references = materialize(
            bundle, task["reference_data"], data / "reference", f"{key}.reference_data"
        )
    else:
        references = Path(_empty(data / "reference", "reference data"))
        warnings.append(f"{key}: no reference_data: /app/input/ref is empty")
    ingestion = _ingestion(bundle, dest, task, key=key, name=name, wall_s=wall_s)
    if task.get("input_data"):
        inputs = materialize(bundle, task["input_data"], data / "input_data", f"{key}.input_data")
    else:
        inputs = Path(_empty(data / "input_data", "input data"))
    if ingestion is not None:  # the input data is the code's: hidden, not in the kit
        ingestion["input_data"] = inputs.relative_to(dest).as_posix()
        hidden = inputs.relative_to(dest).as_posix()
        public = Path(_empty(data / "public", "public inputs")).relative_to(dest).as_posix()
    else:
        public = inputs.relative_to(dest).as_posix()
        hidden = Path(_empty(data / "hidden", "hidden inputs")).relative_to(dest).as_posix()
    if wall_s is None:
        warnings.append(
            f"{key}: no execution_time_limit: the scoring program may run {DEFAULT_WALL_S:g} s"
        )
    return TaskPlan(
        name=name,
        title=str(task.get("name") or name),
        program=root.relative_to(dest).as_posix(),
        command=command,
        public_inputs=public,
        hidden_inputs=hidden,
        references=references.relative_to(dest).as_posix(),
        wall_s=wall_s or DEFAULT_WALL_S,
        ingestion=ingestion,
    )


def _ingestion(
    bundle: Path, dest: Path, task: dict[str, Any], *, key: str, name: str, wall_s: float | None
) -> dict[str, Any] | None:
    """The scorer's ``ingestion`` block of a task with an ingestion program (else None)."""
    if not task.get("ingestion_program"):
        return None
    where = f"{key}.ingestion_program"
    folder = materialize(
        bundle, task["ingestion_program"], dest / "programs" / f"{name}-ingestion", where
    )
    root = _program_root(folder)
    command = program_command(root, where, scoring=False, input_data=True)
    return {
        "program": root.relative_to(dest).as_posix(),
        "command": command,
        "wall_s": wall_s or DEFAULT_WALL_S,
    }


def read_columns(
    plan: BundlePlan,
    boards: list[Any],
    columns_of: Callable[[dict[str, Any], str], list[tuple[dict[str, Any], str]]],
    key: str,
) -> None:
    """The boards' columns (Codabench form: key, title, sorting, precision, computation...)."""
    for position, board in enumerate(boards):
        if not isinstance(board, dict):
            raise BundleRefusedError("must be a mapping", location=f"{key}[{position}]")
        if position == 0:
            plan.board_title = str(board.get("title") or "Results")
        elif board.get("columns"):
            plan.warnings.append(
                f"{key}[{position}]: its columns join the first board's (one board per phase)"
            )
        found = columns_of(board, f"{key}[{position}]")
        by_index = {int(col.get("index", i)): col for i, (col, _) in enumerate(found)}
        for column, where in found:
            plan.columns.append(_column(column, where, by_index))
        if position == 0 and found:
            primary = int(board.get("primary_index", 0) or 0)
            chosen = by_index.get(primary, found[0][0])
            plan.primary = str(chosen.get("key"))
    if not plan.columns:
        raise BundleRefusedError("no leaderboard column names a score key", location=key)
    if not plan.primary:
        plan.primary = plan.columns[0].key


def _column(column: dict[str, Any], where: str, by_index: dict[int, dict[str, Any]]) -> Column:
    key = str(column.get("key") or "")
    problem = metric_key_problem(key)
    if problem is not None:
        raise BundleRefusedError(problem, location=f"{where}.key")
    sorting = str(column.get("sorting") or "desc").lower()
    if sorting not in ("desc", "asc"):
        raise BundleRefusedError(f"{sorting!r}: use desc or asc", location=f"{where}.sorting")
    computation = None
    operation = column.get("computation")
    if operation:
        mapped = OPERATIONS.get(str(operation).lower())
        if mapped is None:
            raise BundleRefusedError(
                f"{operation!r} is not a computation Proctor makes (avg, sum, min, max)",
                location=f"{where}.computation",
            )
        sources = column.get("computation_keys") or [
            by_index[int(index)].get("key")
            for index in column.get("computation_indexes") or []
            if int(index) in by_index
        ]
        if not sources:
            raise BundleRefusedError(
                "names no column to compute from", location=f"{where}.computation"
            )
        computation = (mapped, tuple(str(source) for source in sources))
    precision = column.get("precision")
    return Column(
        key=key,
        title=str(column.get("title") or key),
        direction="higher" if sorting == "desc" else "lower",
        precision=int(precision) if precision not in (None, "") else DEFAULT_PRECISION,
        hidden=bool(column.get("hidden")),
        computation=computation,
    )


def note_ingestion(task: dict[str, Any], key: str, warnings: list[str]) -> None:
    """``ingestion_only_during_scoring`` is refused: the two programs would have to run at once.

    Such bundles talk through ``/app/shared`` while both run (the scoring program waits for
    the ingestion's files); run one after the other they would wait until their time limit.
    """
    del warnings  # nothing to warn: it is mapped or refused
    if task.get("ingestion_program") and task.get("ingestion_only_during_scoring"):
        raise BundleRefusedError(
            "ingestion and scoring running at once, talking through /app/shared, is not "
            "supported: Proctor runs the ingestion program, then the scoring program",
            location=f"{key}.ingestion_only_during_scoring",
        )


def copy_kit_folders(
    bundle: Path, dest: Path, references: dict[str, str], warnings: list[str]
) -> None:
    """A phase's ``starting_kit`` and ``public_data``: into the kit, under their key's name."""
    for key, reference in references.items():
        target = dest / "kit" / key
        if target.exists():
            continue
        try:
            materialize(bundle, reference, target, key)
        except BundleRefusedError as err:
            warnings.append(f"{key}: {err}: left out of the kit")


def copy_solutions(bundle: Path, dest: Path, paths: list[str], warnings: list[str]) -> None:
    """Sample submissions: each in ``kit/solutions/``, the first also as ``baseline/``."""
    for position, reference in enumerate(paths):
        target = dest / "kit" / "solutions" / Path(reference).stem
        if target.exists():
            continue  # another solution names the same path
        try:
            materialize(bundle, reference, target, f"solutions[{position}].path")
        except BundleRefusedError as err:
            warnings.append(f"solutions[{position}]: {err}: left out")
            continue
        if not (dest / "baseline").exists():
            shutil.copytree(target, dest / "baseline")
