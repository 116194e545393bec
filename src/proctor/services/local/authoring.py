"""Authoring a challenge: ``proctor challenge new`` (a working template) and ``challenge check``.

``new_challenge`` writes a small challenge that runs at once (``proctor run DIR/baseline
--challenge DIR``): public and hidden data, a scoring program, a baseline entry, ``KIT.md`` for
participants and the bundled reference environment's declaration. ``check_challenge`` makes
every check ``challenge add`` and ``proctor run`` make and lists all problems at once, each
with its YAML path and the fix.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from proctor.challenges import bundled_root
from proctor.errors import ConfigError, UsageError
from proctor.protocols.codabench_settings import IngestionProtocol
from proctor.protocols.upload_program import CODE_MARKERS, command_problem
from proctor.resolve import load_challenge
from proctor.services.local.authoring_yaml import challenge_yaml, kit_readme
from proctor.services.local.catalog import challenge_location, check_references
from proctor.services.local.kit_replica import plan_copies
from proctor.services.local.program_compile import compile_programs
from proctor.services.local.program_imports import missing_imports, unlocked_environments
from proctor.services.local.sample_runs import SampleListener, run_samples
from proctor.services.local.template_files import TEMPLATES, write_files
from proctor.settings import Settings
from proctor.spec import CHALLENGE_FILE, Challenge
from proctor.spec.ingestion import LAYOUT

ENVIRONMENT_FILES = ("requirements.in", "requirements.lock", "environment.lock")


def new_challenge(dest: Path, protocol: str, name: str | None = None) -> list[Path]:
    """Write a working challenge of ``protocol`` into ``dest`` (new or empty); the files written."""
    if protocol not in TEMPLATES:
        raise UsageError(f"unknown protocol {protocol!r}: use one of {', '.join(TEMPLATES)}")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"{dest} is not an empty folder: choose a new folder for the challenge")
    title = name or dest.name
    if not _plain_name(title):
        raise UsageError(
            f"{title!r} cannot name a challenge: use letters, digits, '.', '_' and '-' "
            "(pass --name)"
        )
    dest.mkdir(parents=True, exist_ok=True)
    written = write_files(dest, TEMPLATES[protocol]())
    (dest / CHALLENGE_FILE).write_text(challenge_yaml(title, protocol), encoding="utf-8")
    (dest / "KIT.md").write_text(kit_readme(title, protocol), encoding="utf-8")
    environment = dest / "environment"
    environment.mkdir(exist_ok=True)
    for file in ENVIRONMENT_FILES:
        shutil.copy2(bundled_root() / "environment" / file, environment / file)
    return [dest / CHALLENGE_FILE, dest / "KIT.md", *written, environment]


def _plain_name(name: str) -> bool:
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
    return 0 < len(name) <= 64 and name[0].isalnum() and set(name) <= allowed


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem of a challenge folder: the YAML path (or file) at fault and the message."""

    location: str
    message: str

    def to_json(self) -> dict[str, str]:
        """``{"location": ..., "message": ...}``."""
        return {"location": self.location, "message": self.message}


def problems_of(error: ConfigError) -> list[Problem]:
    """The problems one ``ConfigError`` lists (one, or each line of "N problems:")."""
    message = error.message
    lines = message.splitlines()
    if lines and lines[0].endswith("problems:"):
        found = []
        for line in lines[1:]:
            location, _, text = line.strip().removeprefix("- ").partition(": ")
            found.append(Problem(location, text))
        return found
    return [Problem(error.location, message)]


def check_challenge(
    location: Path,
    settings: Settings | None = None,
    *,
    run: bool = False,
    listener: CheckListener | None = None,
) -> list[Problem]:
    """Every problem ``challenge add`` and ``proctor run`` would find in ``location``, at once.

    ``location`` is a challenge folder, its ``challenge.yaml``, or a bundled challenge's name.

    The YAML (keys, values, names, metrics, directions), the folders it names, the scoring
    program's folder and files, the environment's files, the references of every hidden case
    and the determinism cases, the stand-ins, what the starting kit's replica copies (no
    folder holding hidden data), and sample uploads (``baseline/``, ``kit/solutions/``) naming a
    ``command`` the protocol would refuse at prep, and the imports of the programs and samples
    their environment lacks (``program_imports``). Empty when the challenge is ready.

    With ``settings``, every Python program and sample is also byte-compiled with its
    environment's Python (``program_compile``), and with ``run`` too, once nothing else is
    wrong, each sample is evaluated through the real pipeline (``sample_runs``); ``listener``
    hears the notes (which Python compiled what) and which sample runs.
    """
    try:
        challenge = load_challenge(challenge_location(location))
    except ConfigError as err:
        return problems_of(err)
    problems = [*_program_problems(challenge), *_sample_problems(challenge)]
    problems += _environment_problems(challenge)
    for check in (check_references, plan_copies):
        try:
            check(challenge)
        except ConfigError as err:
            problems += problems_of(err)
    if settings is not None:
        problems += _compiled(challenge, settings, listener)
        if run and not problems:
            problems += _sample_runs(challenge, settings, listener)
        elif run and listener is not None:
            listener.note("the samples were not run: fix the problems listed first")
    return problems


class CheckListener(SampleListener, Protocol):
    """Told what a check does beyond reading files: notes, and which sample runs."""

    def note(self, text: str) -> None:
        """A line of information that is no problem (which Python compiled what)."""


def _compiled(
    challenge: Challenge, settings: Settings, listener: CheckListener | None
) -> list[Problem]:
    """Each Python file that does not compile, as ``FILE:LINE`` and the error."""
    report = compile_programs(challenge, settings)
    if listener is not None:
        for text in report.notes:
            listener.note(text)
    return [Problem(error.location, error.message) for error in report.errors]


def _sample_runs(
    challenge: Challenge, settings: Settings, listener: CheckListener | None
) -> list[Problem]:
    """Each sample whose run through the pipeline failed, naming whose program failed."""
    return [Problem(f.sample, f.message) for f in run_samples(challenge, settings, listener)]


def _environment_problems(challenge: Challenge) -> list[Problem]:
    """Imports of the programs and samples the environment lacks; a declared one with no lock."""
    found = [Problem(where, message) for where, message in unlocked_environments(challenge)]
    return found + [Problem(gap.location, gap.message) for gap in missing_imports(challenge)]


def _program_problems(challenge: Challenge) -> list[Problem]:
    """The files each organizer program's command (or check) names must be in its folder.

    A name relative to the working folder (``score.py``) or below the program's own mount
    point (``/app/program/score.py``): the scoring program, its concurrent ingestion and the
    ingestion protocol's programs.
    """
    found = []
    for where, folder, mount, argv in _program_commands(challenge):
        what = "ingestion" if "ingestion" in where or "programs" in where else "scoring"
        for position, item in enumerate(argv[1:], start=1):
            named = _named_file(item, mount)
            if named is not None and not (folder / named).is_file():
                found.append(
                    Problem(
                        f"{where}[{position}]",
                        f"{item} is not in the {what} program's folder {folder}: add it or "
                        "fix the command",
                    )
                )
    return found


def _sample_problems(challenge: Challenge) -> list[Problem]:
    """Sample uploads whose ``metadata`` names a command the protocol refuses at prep.

    A Codabench-style challenge (``results``, ``ingestion``) whose kit entry or solutions are
    programs of their own, where no task would run them (docs/import-bundles.md).
    """
    root = challenge.root
    samples = [root / "baseline", *sorted((root / "kit" / "solutions").glob("*"))]
    found = []
    for sample in samples:
        marker = next((sample / name for name in CODE_MARKERS if (sample / name).is_file()), None)
        if marker is None:
            continue
        for task in challenge.tasks:
            problem = command_problem(challenge.protocol, task.name, sample)
            if problem is not None:
                where = marker.relative_to(root).as_posix()
                found.append(Problem(where, f"task {task.name}: {problem}"))
                break
    return found


def _program_commands(challenge: Challenge) -> list[tuple[str, Path, str, tuple[str, ...]]]:
    """(YAML path, folder, its mount point, argv) of every organizer program's command."""
    found = []
    for index, task in enumerate(challenge.tasks):
        program = task.scoring_program
        if program is None:
            continue
        where = f"tasks[{index}].scorer"
        mount = program.mounts.program
        found.append((f"{where}.command", program.program, mount, program.command))
        if program.check_command is not None:
            found.append((f"{where}.check", program.program, mount, program.check_command))
        beside = program.concurrent_ingestion
        if beside is not None:
            command = f"{where}.concurrent_ingestion.command"
            found.append((command, beside.program, LAYOUT.program, beside.command))
    protocol = challenge.protocol
    if isinstance(protocol, IngestionProtocol):
        for name, ingestion in protocol.programs.items():
            where = f"protocol.programs.{name}.command"
            found.append((where, ingestion.program, LAYOUT.program, ingestion.command))
    return found


def _named_file(item: str, mount: str) -> Path | None:
    """The file an argv item names in the program's folder (None: it names no such file)."""
    named = Path(item)
    if item.startswith(mount + "/"):
        return Path(item.removeprefix(mount + "/")) if named.suffix else None
    if named.suffix and not named.is_absolute() and not item.startswith("-"):
        return named
    return None
