"""The starting kit's replica of a challenge: the same challenge, its hidden data left behind.

``write_replica`` writes ``KIT/challenge/``: a ``challenge.yaml`` with the same protocol,
limits, environment declaration and lock, scorer (and scoring program, unless the challenge
says ``kit: {scorer: omit}``), and every file it names, except hidden data. Each task's hidden
inputs and references are replaced by the organizer's public stand-in
(``tasks[].kit.stand_in``), copied to ``stand-in/TASK/inputs/NAME`` (the folder keeps its
name) and ``stand-in/TASK/references``; a task without
one keeps no hidden data, so ``proctor run`` stops after the quiz there. Files the challenge
names beside its folder (a shared ``../environment``) go under ``beside/``, and the YAML is
rewritten to name them there. Server matters (pages, published files, registration) are left
out: the replica is for ``proctor run``.
"""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from proctor.challenges import bundled_root
from proctor.errors import ConfigError
from proctor.protocols.base import FilesDriver
from proctor.protocols.registry import driver_for
from proctor.resolve import load_challenge
from proctor.services.untrusted_tree import copy_inside
from proctor.spec import CHALLENGE_FILE, Challenge, Task
from proctor.spec.loader import read_mapping

REPLICA_FOLDER = "challenge"
STAND_IN_FOLDER = "stand-in"
BESIDE_FOLDER = "beside"
OMITTED_PROGRAM = "scoring-omitted"
SERVER_KEYS = ("pages", "files", "files_public", "registration", "submission_fields", "kit")
"""Top-level keys the replica leaves out: they matter to a server, not to ``proctor run``."""
HEADER = """\
# The starting kit's replica of challenge {name}: the same protocol, limits, environment and
# scorer as the official evaluation. Hidden data is replaced by the organizer's public
# stand-in (stand-in/TASK/); a task without one runs prep and quiz only.
# Run it from the kit's folder:  proctor run entry --challenge challenge
"""


@dataclass(frozen=True, slots=True)
class Replica:
    """What a kit's replica runs: tasks scored on a stand-in, tasks stopping after the quiz."""

    folder: Path
    scored: tuple[str, ...]
    quiz_only: tuple[str, ...]
    scorer_omitted: bool

    def summary(self) -> str:
        """One paragraph for the kit's README saying what the replica runs."""
        lines = []
        if self.scored:
            lines.append(
                f"{_tasks(self.scored)} every stage, scored on the organizer's public "
                "stand-in data (not the official scores)."
            )
        if self.quiz_only:
            why = (
                "the scoring program is not in the kit"
                if self.scorer_omitted
                else ("the organizer declared no public stand-in for the hidden data")
            )
            lines.append(f"{_tasks(self.quiz_only)} prep and quiz only: {why}.")
        return " ".join(lines)


def _tasks(names: tuple[str, ...]) -> str:
    """``Task a runs`` or ``Tasks a, b run``."""
    if len(names) == 1:
        return f"Task {names[0]} runs"
    return f"Tasks {', '.join(names)} run"


def hidden_paths(challenge: Challenge) -> list[Path]:
    """Every folder of ``challenge`` no participant may receive (resolved paths).

    Hidden references; hidden inputs, unless the protocol hands them to participants to
    predict on (``predictions``: its test inputs); the inputs of an ingestion run beside
    scoring; the scoring program when the kit omits it.
    """
    driver = driver_for(challenge.protocol.kind)
    inputs_public = issubclass(driver, FilesDriver) and driver.scores_public_split
    found: list[Path] = []
    for task in challenge.tasks:
        found += [task.hidden_references] if task.hidden_references is not None else []
        if task.hidden_inputs is not None and not inputs_public:
            found.append(task.hidden_inputs)
        program = task.scoring_program
        if program is None:
            continue
        beside = program.concurrent_ingestion
        if beside is not None and beside.input_data is not None:
            found.append(beside.input_data)
        if challenge.kit.scorer == "omit":
            found.append(program.program)
    return [path.resolve() for path in dict.fromkeys(found)]


def _paths(value: Any) -> Iterator[Path]:
    """Every path in a spec object, walking its fields (a dump loses a union's subclass)."""
    if isinstance(value, Path):
        yield value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            if name not in ("root", "kit", "files"):  # files: the Files page's, not the kit's
                yield from _paths(getattr(value, name))
    elif isinstance(value, dict):
        for item in value.values():
            yield from _paths(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _paths(item)


def _named(challenge: Challenge) -> list[Path]:
    """The files and folders the challenge names (a bundled environment's are not its own)."""
    root, bundled = challenge.root.resolve(), bundled_root().resolve()
    found = []
    for path in _paths(challenge):
        real = (root / path).resolve()
        if not real.exists():
            continue
        if real.is_relative_to(bundled) and not real.is_relative_to(root.parent):
            continue
        found.append(real)
    return list(dict.fromkeys(found))


def _place(real: Path, root: Path) -> Path:
    """Where ``real`` goes in the replica, relative to it."""
    if real.is_relative_to(root):
        return real.relative_to(root)
    if real.is_relative_to(root.parent):
        return Path(BESIDE_FOLDER) / real.relative_to(root.parent)
    raise ConfigError(
        f"{real} lies outside the challenge folder and the folder holding it: the kit cannot "
        "carry it",
        path=root / CHALLENGE_FILE,
    )


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        copy_inside(source, target, skip=lambda name: name == "__pycache__", exist_ok=True)
    else:
        shutil.copy2(source, target)


def plan_copies(challenge: Challenge) -> dict[Path, Path]:
    """Each file or folder the replica copies, and its place in the replica (relative).

    Raises ``ConfigError`` for one the kit cannot carry: a folder holding hidden data, or a
    path outside the challenge folder and the folder holding it.
    """
    root = challenge.root.resolve()
    hidden = hidden_paths(challenge)
    replaced = hidden + [
        folder.resolve()
        for task in challenge.tasks
        for folder in (task.hidden_inputs, task.hidden_references)
        if folder is not None
    ]
    moved: dict[Path, Path] = {}
    for real in _named(challenge):
        if any(real.is_relative_to(folder) for folder in replaced):
            continue
        inside = [secret for secret in hidden if secret.is_relative_to(real)]
        if inside:
            raise ConfigError(
                f"{real} holds hidden data ({inside[0]}): the kit copies it, so move the hidden "
                "data out of it",
                path=root / CHALLENGE_FILE,
            )
        moved[real] = _place(real, root)
    return moved


def write_replica(challenge: Challenge, dest: Path) -> Replica:
    """Write the replica of ``challenge`` into ``dest`` (a new folder); what it runs."""
    root = challenge.root.resolve()
    moved = plan_copies(challenge)
    for real, place in moved.items():
        _copy(real, dest / place)
    mapping = read_mapping(root)
    replica = _rewrite(mapping, challenge, dest, moved)
    text = HEADER.format(name=challenge.name) + yaml.safe_dump(
        mapping, sort_keys=False, allow_unicode=True, width=100
    )
    (dest / CHALLENGE_FILE).write_text(text, encoding="utf-8")
    try:
        load_challenge(dest)
    except ConfigError as err:
        raise ConfigError(
            f"the kit's replica does not load ({err}): report this to Proctor's developers",
            path=root / CHALLENGE_FILE,
        ) from None
    return replica


def readme_section(replica: Replica) -> str:
    """The kit README's section on running the official evaluation on this machine."""
    runs = textwrap.fill(
        f"{replica.summary()} The environment is built from its lock on first use; or import "
        "the image from the challenge's Files page first: `proctor env import IMAGE.tar`.",
        width=92,
    )
    return f"""
## Run the evaluation on your machine

`challenge/` is a replica of the challenge: the same protocol, limits, environment and scorer
as the official evaluation, with public stand-in data where the hidden data would be. From
the kit's folder (the one holding this README), run every stage offline, in the same
sandbox and environment, and score:

    proctor run entry --challenge challenge

In a Proctor checkout set up by `make demo`, type `.venv/bin/proctor` for `proctor` (or run
`source .venv/bin/activate` once).

{runs}
"""


def _rewrite(
    mapping: dict[str, Any], challenge: Challenge, dest: Path, moved: dict[Path, Path]
) -> Replica:
    """Change ``mapping`` into the replica's: stand-ins, no server keys, moved paths."""
    root = challenge.root.resolve()
    for key in SERVER_KEYS:
        mapping.pop(key, None)
    _repoint(mapping, root, moved)
    omit = challenge.kit.scorer == "omit"
    scored, quiz_only = [], []
    for raw, task in zip(mapping["tasks"], challenge.tasks, strict=True):
        raw.pop("kit", None)
        if omit and task.scoring_program is not None:
            _omit_program(raw, dest)
        stand_in = task.kit.stand_in
        if _drop_hidden_ingestion_data(raw, task):
            stand_in = None  # the ingestion beside scoring has no public data to run on
        if stand_in is None or (omit and task.scoring_program is not None):
            raw.pop("hidden_inputs", None)
            raw.pop("hidden_references", None)
            quiz_only.append(task.name)
            continue
        # the inputs keep their folder's name: a predictions task's case is named after it
        inputs = Path(STAND_IN_FOLDER) / task.name / "inputs" / stand_in.inputs.name
        references = Path(STAND_IN_FOLDER) / task.name / "references"
        _copy(stand_in.inputs, dest / inputs)
        _copy(stand_in.references, dest / references)
        raw["hidden_inputs"] = inputs.as_posix()
        raw["hidden_references"] = references.as_posix()
        scored.append(task.name)
    return Replica(dest, tuple(scored), tuple(quiz_only), omit)


def _drop_hidden_ingestion_data(raw: dict[str, Any], task: Task) -> bool:
    """Leave out the input data of an ingestion run beside scoring (hidden); True if it had one."""
    program = task.scoring_program
    if program is None or program.concurrent_ingestion is None:
        return False
    if program.concurrent_ingestion.input_data is None:
        return False
    raw["scorer"]["concurrent_ingestion"].pop("input_data", None)
    return True


def _omit_program(raw: dict[str, Any], dest: Path) -> None:
    """Point the task's scoring program at an empty folder saying it was left out."""
    folder = dest / OMITTED_PROGRAM
    folder.mkdir(exist_ok=True)
    (folder / "README.md").write_text(
        "The organizer keeps the scoring program out of the starting kit.\n", encoding="utf-8"
    )
    raw["scorer"]["program"] = OMITTED_PROGRAM


def _repoint(value: Any, root: Path, moved: dict[Path, Path]) -> Any:
    """Rewrite every string naming a moved path (relative to ``root``) to its new place."""
    if isinstance(value, dict):
        for key, item in value.items():
            value[key] = _repoint(item, root, moved)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            value[index] = _repoint(item, root, moved)
    elif isinstance(value, str) and ("/" in value or "." in value):
        try:
            real = (root / value).resolve()
        except (OSError, ValueError):
            return value
        if real in moved and not real.is_relative_to(root):
            return moved[real].as_posix()
    return value
