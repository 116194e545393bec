"""Whether a bundle takes code submissions, from what the bundle itself says.

On Codabench and CodaLab an upload whose ``metadata`` names a ``command`` is run as a program
(CodaLab's classic code submission, no ingestion program needed); an ingestion program runs
the upload too. A bundle says it takes code when:

- a task (CodaLab: a phase) has an ingestion program run before scoring;
- a sample submission it ships is a program: a solution (Codabench ``solutions[].path``) or a
  phase's ``starting_kit`` whose ``metadata`` (at its top, or one folder down) names a
  ``command``;
- (CodaLab) a phase sets ``is_scoring_only: false``: CodaLab runs a prediction step before
  scoring there (its default, ``true``, scores uploads as they are).

Such a bundle becomes the ``ingestion`` protocol (its input data hidden, never in the kit);
one that says none of this stays ``results``, which refuses an upload naming a command.
"""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from proctor.protocols.upload_program import CODE_MARKERS, metadata_command
from proctor.services.local.bundle_import.plan import BundlePlan

MAX_METADATA_BYTES = 64 * 1024
"""A ``metadata`` file larger than this is no submission's (it is not read)."""
NOTE = (
    "the bundle takes code submissions ({reason}): protocol ingestion; an upload whose "
    "metadata names a command runs as its own program in the exam (on the hidden input data) "
    "on every task without an ingestion program, and a result zip is scored as it is"
)


def is_program(bundle: Path, reference: str) -> bool:
    """True when the folder or zip ``reference`` is a submission naming its own ``command``.

    Its ``metadata`` is read at its top, or one folder down when it holds one folder only;
    a zip is not unpacked (starting kits can be large), only that file is read.
    """
    found = _located(bundle, reference)
    if found is None:
        return False
    with tempfile.TemporaryDirectory(prefix="proctor-sample-") as scratch:
        folder = found if found.is_dir() else _metadata_only(found, Path(scratch))
        if metadata_command(folder) is not None:
            return True
        inner = [item for item in folder.iterdir() if item.name != "__MACOSX"]
        return len(inner) == 1 and inner[0].is_dir() and metadata_command(inner[0]) is not None


def _located(bundle: Path, reference: str) -> Path | None:
    """The folder or zip of the bundle ``reference`` names (``NAME`` for ``NAME.zip`` too)."""
    relative = PurePosixPath(reference.replace("\\", "/"))
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        return None
    path = bundle.joinpath(*relative.parts)
    for candidate in (path, path.with_name(path.name + ".zip"), path.with_suffix("")):
        if candidate.is_dir() or (candidate.is_file() and zipfile.is_zipfile(candidate)):
            return candidate
    return None


def _metadata_only(archive: Path, scratch: Path) -> Path:
    """A folder holding the zip's ``metadata`` files alone, where :func:`is_program` looks.

    At the zip's top, or one folder down when that folder is all the zip holds.
    """
    try:
        with zipfile.ZipFile(archive) as zipped:
            names = [
                PurePosixPath(info.filename.replace("\\", "/")).parts for info in zipped.infolist()
            ]
            tops = {parts[0] for parts in names if parts and parts[0] != "__MACOSX"}
            for info, parts in zip(zipped.infolist(), names, strict=True):
                wanted = len(parts) == 1 or (len(parts) == 2 and len(tops) == 1)
                if not wanted or info.is_dir() or parts[-1] not in CODE_MARKERS:
                    continue
                if parts[0] in ("/", "..", "__MACOSX") or info.file_size > MAX_METADATA_BYTES:
                    continue
                target = scratch.joinpath(*parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zipped.read(info))
    except zipfile.BadZipFile:
        pass
    return scratch


def first_program(bundle: Path, references: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The first (YAML key, reference) of ``references`` that is a program, or None."""
    for key, reference in references:
        if is_program(bundle, reference):
            return key, reference
    return None


def exam_ingestion(task: dict[str, Any]) -> bool:
    """True for a task (CodaLab: a phase) whose ingestion program runs before scoring."""
    return bool(task.get("ingestion_program")) and not task.get("ingestion_only_during_scoring")


def codabench_evidence(spec: dict[str, Any], bundle: Path) -> str | None:
    """Why a Codabench bundle takes code submissions, or None (it takes results only)."""
    tasks = [task for task in spec.get("tasks") or [] if isinstance(task, dict)]
    if any(exam_ingestion(task) for task in tasks):
        return "a task has an ingestion program"
    phases = [phase for phase in spec.get("phases") or [] if isinstance(phase, dict)]
    references = [
        (f"solutions[{index}].path", str(item["path"]))
        for index, item in enumerate(spec.get("solutions") or [])
        if isinstance(item, dict) and item.get("path")
    ] + [
        (f"phases[{index}].starting_kit", str(phase["starting_kit"]))
        for index, phase in enumerate(phases)
        if phase.get("starting_kit")
    ]
    found = first_program(bundle, references)
    return None if found is None else f"{found[0]} {found[1]!r} names a command in its metadata"


def codalab_evidence(
    phases: list[tuple[str, dict[str, Any]]], bundle: Path
) -> tuple[str | None, str | None]:
    """(Why a CodaLab bundle takes code, its sample code submission), each None if none."""
    kits = [
        (f"{key}.starting_kit", str(phase["starting_kit"]))
        for key, phase in phases
        if phase.get("starting_kit")
    ]
    sample = first_program(bundle, kits)
    if any(exam_ingestion(phase) for _, phase in phases):
        reason: str | None = "a phase has an ingestion program"
    elif sample is not None:
        reason = f"{sample[0]} {sample[1]!r} names a command in its metadata"
    else:
        reason = next(
            (
                f"{key}.is_scoring_only: false"
                for key, phase in phases
                if phase.get("is_scoring_only") is False
                or str(phase.get("is_scoring_only")).lower() == "false"
            ),
            None,
        )
    return reason, None if sample is None else sample[1]


def note_code(plan: BundlePlan, reason: str | None) -> None:
    """Mark ``plan`` as taking code (``reason`` not None), noting a task runs uploads' programs."""
    plan.takes_code = reason is not None
    if reason is not None and any(
        task.ingestion is None and task.concurrent is None for task in plan.tasks
    ):
        plan.warnings.append(NOTE.format(reason=reason))
