"""A bundle task's files under DEST, its programs' commands, its columns and sample submissions.

Shared by the Codabench and CodaLab importers: programs land in ``programs/TASK`` (and
``programs/TASK-ingestion``), data in ``data/TASK/{input_data,reference}`` (with an empty
``hidden`` folder where no code runs on hidden inputs), solutions in ``kit/solutions/`` and
the first as ``baseline/``. A task's ingestion program becomes the ``ingestion`` protocol's
program of the task (it runs the upload in the exam, on the input data as hidden inputs), or,
with ``ingestion_only_during_scoring``, the scorer's ``concurrent_ingestion``. In a bundle
taking code submissions, a task without one runs an upload naming its own command on the input
data as hidden inputs.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from proctor.services.local.bundle_import.common import (
    BundleRefusedError,
    is_metric_name,
    materialize,
    metric_name,
    program_command,
    text,
    whole,
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


def _empty(folder: Path, what: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "README.txt").write_text(EMPTY_NOTE.format(what=what), encoding="utf-8")
    return folder


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
    public_data: str | None = None,
    takes_code: bool = False,
) -> TaskPlan:
    """Copy a task's programs and data under ``dest``; its plan.

    ``public_data``: the bundle's sample data of a phase running the task; laid out as the
    input data, it is the public inputs the code runs on in the quiz. ``takes_code``: the
    bundle takes code submissions (``code_evidence``): the input data is the code's, hidden.
    """
    during = bool(task.get("ingestion_program") and task.get("ingestion_only_during_scoring"))
    root, command = _scoring_program(bundle, dest / "programs" / name, task, key, during)
    data = dest / "data" / name
    references = _references(bundle, data, task, key, warnings)
    ingestion = _ingestion(bundle, dest, task, key=key, name=name, during=during)
    inputs = _input_data(bundle, data, task, key)
    concurrent = None
    if during and ingestion is not None:
        concurrent, public, hidden = _beside_scoring(ingestion, inputs, (dest, data))
        _warn_program_variable([command, concurrent["command"]], key, warnings)
        ingestion = None
    else:
        if ingestion is not None:
            ingestion["wall_s"] = wall_s or DEFAULT_WALL_S
        sample = public_data if task.get("input_data") else None  # no inputs to lay out as
        code_runs = ingestion is not None or takes_code
        public, hidden = _public_and_hidden((bundle, data), inputs, sample, code_runs, warnings)
    limit = _scoring_limit(wall_s, key, warnings)
    return TaskPlan(
        name=name,
        title=str(task.get("name") or name),
        program=root.relative_to(dest).as_posix(),
        command=command,
        public_inputs=public.relative_to(dest).as_posix(),
        hidden_inputs=hidden.relative_to(dest).as_posix(),
        references=references.relative_to(dest).as_posix(),
        wall_s=limit,
        ingestion=ingestion,
        concurrent=concurrent,
    )


def _scoring_limit(wall_s: float | None, key: str, warnings: list[str]) -> float:
    """The scoring program's time limit: the bundle's, else the default (with a warning)."""
    if wall_s is None:
        warnings.append(
            f"{key}: no execution_time_limit: the scoring program may run {DEFAULT_WALL_S:g} s"
        )
    return wall_s or DEFAULT_WALL_S


def _beside_scoring(
    ingestion: dict[str, Any], inputs: Path, places: tuple[Path, Path]
) -> tuple[dict[str, Any], Path, Path]:
    """An ingestion run beside scoring: (its ``concurrent_ingestion``, public, hidden inputs).

    The input data is the code's, handed to the ingestion alone: never in the kit, so the
    exam's public and hidden inputs are empty. ``places``: the challenge and the task's data.
    """
    dest, data = places
    concurrent = {**ingestion, "input_data": inputs.relative_to(dest).as_posix()}
    public = _empty(data / "public", "public inputs")
    return concurrent, public, _empty(data / "hidden", "hidden inputs")


def _public_and_hidden(
    places: tuple[Path, Path],
    inputs: Path,
    sample: str | None,
    code_runs: bool,
    warnings: list[str],
) -> tuple[Path, Path]:
    """The task's public and hidden inputs (``places``: the bundle and the task's data folder).

    Result submissions: the input data is public (participants predict on it). Code (the
    ingestion program's or the upload's own program): it is hidden, and the phase's ``sample``
    data, laid out as the input data, is the public inputs the code runs on in the quiz.
    """
    bundle, data = places
    if not code_runs:
        return inputs, _empty(data / "hidden", "hidden inputs")
    return _sample_inputs(bundle, data, sample, inputs, warnings), inputs


def _scoring_program(
    bundle: Path, dest: Path, task: dict[str, Any], key: str, during: bool
) -> tuple[Path, list[str]]:
    """The task's scoring program copied to ``dest``: its folder and substituted command."""
    where = f"{key}.scoring_program"
    if not task.get("scoring_program"):
        raise BundleRefusedError("a task needs a scoring program", location=where)
    root = _program_root(materialize(bundle, task["scoring_program"], dest, where))
    return root, program_command(root, where, scoring=True, during_scoring=during)


def _references(
    bundle: Path, data: Path, task: dict[str, Any], key: str, warnings: list[str]
) -> Path:
    """The task's reference data under ``data/reference`` (an empty folder without any)."""
    if task.get("reference_data"):
        where = f"{key}.reference_data"
        return materialize(bundle, task["reference_data"], data / "reference", where)
    warnings.append(f"{key}: no reference_data: /app/input/ref is empty")
    return _empty(data / "reference", "reference data")


def _input_data(bundle: Path, data: Path, task: dict[str, Any], key: str) -> Path:
    """The task's input data under ``data/input_data`` (an empty folder without any)."""
    if task.get("input_data"):
        return materialize(bundle, task["input_data"], data / "input_data", f"{key}.input_data")
    return _empty(data / "input_data", "input data")


def _sample_inputs(
    bundle: Path, data: Path, public_data: str | None, inputs: Path, warnings: list[str]
) -> Path:
    """The phase's ``public_data`` as the quiz's inputs, when laid out as the input data.

    Every top-level name of the input data must be in it; otherwise (or without one) the
    public inputs are an empty folder and the quiz runs nothing.
    """
    target = data / "public"
    if public_data:
        try:
            materialize(bundle, public_data, target, "public_data")
        except BundleRefusedError:
            shutil.rmtree(target, ignore_errors=True)
        else:
            needed = {item.name for item in inputs.iterdir()}
            if needed and needed <= {item.name for item in target.iterdir()}:
                return target
            shutil.rmtree(target)
            warnings.append(
                f"public_data {public_data!r} is not laid out as the input data (its top "
                "level lacks some of the input data's files): the quiz runs no ingestion"
            )
    return _empty(target, "public inputs")


def _ingestion(
    bundle: Path, dest: Path, task: dict[str, Any], *, key: str, name: str, during: bool
) -> dict[str, Any] | None:
    """A task's ingestion program (``program`` and ``command``), None without one."""
    if not task.get("ingestion_program"):
        return None
    where = f"{key}.ingestion_program"
    folder = materialize(
        bundle, task["ingestion_program"], dest / "programs" / f"{name}-ingestion", where
    )
    root = _program_root(folder)
    command = program_command(root, where, scoring=during, input_data=True, during_scoring=during)
    return {"program": root.relative_to(dest).as_posix(), "command": command}


def _warn_program_variable(commands: list[list[str]], key: str, warnings: list[str]) -> None:
    """Ingestion during scoring: ``$program`` names a folder the compute worker never mounts."""
    if not any("/app/ingestion_program" in part for command in commands for part in command):
        return
    warnings.append(
        f"{key}.ingestion_only_during_scoring: a command using $program runs "
        "/app/ingestion_program/..., as on Codabench, where nothing is mounted there: use "
        "$ingestion_program (the ingestion's folder) or /app/program in the metadata"
    )


def read_columns(
    plan: BundlePlan,
    boards: list[Any],
    columns_of: Callable[[dict[str, Any], str], list[tuple[dict[str, Any], str]]],
    key: str,
) -> None:
    """The boards' columns (Codabench form: key, title, sorting, precision, computation...).

    A key that is no metric name (``err-new``, ``NER accuracy``) becomes one (``err_new``),
    its scorer reading it under the key (``score_keys``), as Codabench stores any key.
    """
    found_by_board = []
    for position, board in enumerate(boards):
        if not isinstance(board, dict):
            raise BundleRefusedError("must be a mapping", location=f"{key}[{position}]")
        found_by_board.append(columns_of(board, f"{key}[{position}]"))
    names = _metric_names([column for found in found_by_board for column, _ in found])
    for position, (board, found) in enumerate(zip(boards, found_by_board, strict=True)):
        if position == 0:
            plan.board_title = str(board.get("title") or "Results")
        elif board.get("columns"):
            plan.warnings.append(
                f"{key}[{position}]: its columns join the first board's (one board per phase)"
            )
        _read_board(plan, board, found, names, first=position == 0)
    if not plan.columns:
        raise BundleRefusedError("no leaderboard column names a score key", location=key)
    if not plan.primary:
        plan.primary = plan.columns[0].key


def _read_board(
    plan: BundlePlan,
    board: dict[str, Any],
    found: list[tuple[dict[str, Any], str]],
    names: dict[str, str],
    first: bool,
) -> None:
    """One board's columns into the plan (the first board's primary column ranks)."""
    by_index = {whole(col.get("index", i), f"{w}.index"): col for i, (col, w) in enumerate(found)}
    for column, where in found:
        plan.columns.append(_column(column, where, by_index, names))
        if plan.columns[-1].label:
            plan.warnings.append(
                f"{where}.key: {plan.columns[-1].label!r} is no metric name: metric "
                f"{plan.columns[-1].key!r}, read from the scores under its key"
            )
    if first and found:
        primary = whole(board.get("primary_index", 0) or 0, "leaderboards[0].primary_index")
        chosen = by_index.get(primary, found[0][0])
        plan.primary = names.get(str(chosen.get("key")), "")


def _metric_names(columns: list[dict[str, Any]]) -> dict[str, str]:
    """``{column key: metric name}``: a key that is no metric name gets one, unique."""
    keys = [str(column.get("key") or "") for column in columns]
    taken = {key for key in keys if is_metric_name(key)}
    names: dict[str, str] = {}
    for key in keys:
        if not key.strip():
            continue
        names.setdefault(key, key if is_metric_name(key) else metric_name(key, taken))
    return names


def _column(
    column: dict[str, Any],
    where: str,
    by_index: dict[int, dict[str, Any]],
    names: dict[str, str],
) -> Column:
    key = text(column.get("key"), f"{where}.key")
    if key not in names:
        raise BundleRefusedError("a column needs a score key", location=f"{where}.key")
    sorting = (text(column.get("sorting"), f"{where}.sorting") or "desc").lower()
    if sorting not in ("desc", "asc"):
        raise BundleRefusedError(f"{sorting!r}: use desc or asc", location=f"{where}.sorting")
    computation = None
    operation = column.get("computation")
    if operation:
        mapped = OPERATIONS.get(text(operation, f"{where}.computation").lower())
        if mapped is None:
            raise BundleRefusedError(
                f"{operation!r} is not a computation Proctor makes (avg, sum, min, max)",
                location=f"{where}.computation",
            )
        sources = column.get("computation_keys") or [
            by_index[index].get("key")
            for index in _indexes(column.get("computation_indexes"), f"{where}.computation_indexes")
            if index in by_index
        ]
        if not sources:
            raise BundleRefusedError(
                "names no column to compute from", location=f"{where}.computation"
            )
        computation = (mapped, tuple(names.get(str(source), str(source)) for source in sources))
    precision = column.get("precision")
    return Column(
        key=names[key],
        label=key if names[key] != key else "",
        title=text(column.get("title"), f"{where}.title") or key,
        direction="higher" if sorting == "desc" else "lower",
        precision=(
            whole(precision, f"{where}.precision")
            if precision not in (None, "")
            else DEFAULT_PRECISION
        ),
        hidden=bool(column.get("hidden")),
        computation=computation,
    )


def _indexes(value: Any, location: str) -> list[int]:
    """A list of column indexes, each a whole number (none: empty)."""
    if value in (None, ""):
        return []
    if not isinstance(value, list):
        raise BundleRefusedError("must be a list of column indexes", location=location)
    return [whole(index, location) for index in value]


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
