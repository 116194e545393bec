"""The public stand-in of each imported task: the bundle's own samples, where it has them.

A Codabench or CodaLab bundle ships a phase's ``public_data`` and ``starting_kit`` (copied to
``kit/public_data`` and ``kit/starting_kit``). A task gets a stand-in
(``tasks[].kit.stand_in``) when a folder of those holds every top-level name of its reference
data (a sample ``solution.csv`` beside the hidden one), and, where code runs on hidden input
data, the public sample laid out as the input data (the task's public inputs). Other tasks
get none: their kit's replica runs prep and quiz only, and the import says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from proctor.services.local.bundle_import.plan import BundlePlan, TaskPlan

SAMPLE_FOLDERS = ("public_data", "starting_kit")
DEPTH = 3
"""How deep in a sample the folder holding the reference's names may lie."""


def add_stand_ins(plan: BundlePlan, dest: Path) -> None:
    """Give each task of ``plan`` the stand-in its samples offer; warn for those without."""
    samples = [dest / "kit" / name for name in SAMPLE_FOLDERS if (dest / "kit" / name).is_dir()]
    for task in plan.tasks:
        task.stand_in = _stand_in(task, dest, samples)
        if task.stand_in is None and samples:
            plan.warnings.append(
                f"task {task.name}: no public sample holds files named as its reference data: "
                "the starting kit's replica runs prep and quiz only (add tasks[].kit.stand_in)"
            )


def _stand_in(task: TaskPlan, dest: Path, samples: list[Path]) -> dict[str, str] | None:
    """The stand-in of ``task`` (paths relative to ``dest``), or None."""
    references = dest / task.references
    needed = {item.name for item in references.iterdir()} if references.is_dir() else set()
    if not needed:
        return None
    found = next(
        (
            folder
            for sample in samples
            for folder in _folders(sample, DEPTH)
            if _holds(folder, needed)
        ),
        None,
    )
    if found is None:
        return None
    hidden = dest / task.hidden_inputs
    inputs = hidden
    if any(hidden.iterdir()):  # code runs on hidden input data: the sample must stand in
        public = dest / task.public_inputs
        if not _holds(public, {item.name for item in hidden.iterdir()}):
            return None
        inputs = public
    return {
        "inputs": inputs.relative_to(dest).as_posix(),
        "references": found.relative_to(dest).as_posix(),
    }


def _holds(folder: Path, names: set[str]) -> bool:
    return folder.is_dir() and names <= {item.name for item in folder.iterdir()}


def _folders(root: Path, depth: int) -> Iterator[Path]:
    """``root`` and its folders down to ``depth`` levels, shallow first (links not followed)."""
    level = [root]
    for _ in range(depth + 1):
        yield from level
        level = sorted(p for f in level for p in f.iterdir() if p.is_dir() and not p.is_symlink())
