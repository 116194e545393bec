"""A bundle task's files under DEST, its programs' commands and its sample submissions.

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

import re
import shlex
import shutil
from pathlib import Path
from typing import Any

from proctor.errors import ConfigError
from proctor.services.local.bundle_import.document import IngestionProgram
from proctor.services.local.bundle_import.plan import DEFAULT_WALL_S, TaskPlan
from proctor.services.local.bundle_import.reading import (
    METADATA_BOUNDS,
    BundleRefusedError,
    materialize,
    read_yaml,
)

EXAMPLE_COMMAND = "command: python $program/score.py $input $output"


def program_command(
    folder: Path, key: str, *, scoring: bool, input_data: bool = False, during_scoring: bool = False
) -> list[str]:
    """The argv of a program folder's ``metadata``/``metadata.yaml`` ``command``, substituted.

    The variables are replaced as Codabench's compute worker replaces them (see
    :func:`substitute`), then the line is split without a shell. A ``python`` command runs
    ``python3``.
    """
    for name in ("metadata.yaml", "metadata"):
        if (folder / name).is_file():
            try:
                metadata = read_yaml(folder / name, METADATA_BOUNDS)
            except ConfigError as err:  # named by its key: DEST is removed on a refusal
                raise BundleRefusedError(
                    f"the program's {name}: {err.message}", location=key
                ) from None
            break
    else:
        raise BundleRefusedError(
            "the program has no `metadata` file (at its top, or one folder down): add one "
            f"saying how to run it, e.g. `{EXAMPLE_COMMAND}`",
            location=key,
        )
    command = metadata.get("command") if isinstance(metadata, dict) else None
    if not isinstance(command, str) or not command.strip():
        raise BundleRefusedError(
            f"the program's {name} has no `command`: add one, e.g. `{EXAMPLE_COMMAND}`",
            location=key,
        )
    line = substitute(
        command, scoring=scoring, input_data=input_data, during_scoring=during_scoring
    )
    argv = shlex.split(line)
    if argv and argv[0] == "python":
        argv[0] = "python3"
    return argv


def substitute(
    command: str, *, scoring: bool, input_data: bool = False, during_scoring: bool = False
) -> str:
    """``command`` with the compute worker's ``$program``, ``$input``... paths (longest first).

    ``scoring``: the run is in the scoring step (``$predictions`` is ``/app/input/res``, else
    ``/app/output``); ``input_data``: an ingestion program's (``$input`` is
    ``/app/input_data``, else ``/app/input``); ``during_scoring``: the task runs its ingestion
    during scoring, where the worker replaces ``$program`` by ``/app/ingestion_program`` in
    both programs' commands (and mounts nothing there).
    """
    table = {
        "$ingestion_program": "/app/program",
        "$submission_program": "/app/ingested_program",
        "$predictions": "/app/input/res" if scoring else "/app/output",
        "$program": "/app/ingestion_program" if during_scoring and scoring else "/app/program",
        "$hidden": "/app/input/ref",
        "$shared": "/app/shared",
        "$output": "/app/output",
        "$input": "/app/input_data" if input_data or not scoring else "/app/input",
        "$tmp": "/app/output",
    }
    pattern = re.compile("|".join(re.escape(key) for key in table))
    return pattern.sub(lambda match: table[match.group(0)], command)


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
        _warn_program_variable([command, concurrent.command], key, warnings)
        ingestion = None
    else:
        if ingestion is not None:
            ingestion = ingestion.model_copy(update={"wall_s": wall_s or DEFAULT_WALL_S})
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
    ingestion: IngestionProgram, inputs: Path, places: tuple[Path, Path]
) -> tuple[IngestionProgram, Path, Path]:
    """An ingestion run beside scoring: (its ``concurrent_ingestion``, public, hidden inputs).

    The input data is the code's, handed to the ingestion alone: never in the kit, so the
    exam's public and hidden inputs are empty. ``places``: the challenge and the task's data.
    """
    dest, data = places
    concurrent = ingestion.model_copy(update={"input_data": inputs.relative_to(dest).as_posix()})
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
) -> IngestionProgram | None:
    """A task's ingestion program (``program`` and ``command``), None without one."""
    if not task.get("ingestion_program"):
        return None
    where = f"{key}.ingestion_program"
    folder = materialize(
        bundle, task["ingestion_program"], dest / "programs" / f"{name}-ingestion", where
    )
    root = _program_root(folder)
    command = program_command(root, where, scoring=during, input_data=True, during_scoring=during)
    return IngestionProgram(program=root.relative_to(dest).as_posix(), command=command)


def _warn_program_variable(commands: list[list[str]], key: str, warnings: list[str]) -> None:
    """Ingestion during scoring: ``$program`` names a folder the compute worker never mounts."""
    if not any("/app/ingestion_program" in part for command in commands for part in command):
        return
    warnings.append(
        f"{key}.ingestion_only_during_scoring: a command using $program runs "
        "/app/ingestion_program/..., as on Codabench, where nothing is mounted there: use "
        "$ingestion_program (the ingestion's folder) or /app/program in the metadata"
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
