"""Byte-compile every Python program of a challenge with the Python that will run it.

``challenge check`` and ``challenge import`` (as warnings) call :func:`compile_programs`: the
scoring program, its concurrent ingestion, the ingestion protocol's programs and the samples
(``baseline/``, ``kit/solutions/*``) are compiled, each file once, in the sandbox on the
root of the environment it runs in (``python3`` of the built environment). An environment not
built yet, or ``environment: host``, is compiled by Proctor's own Python instead, and a note
says so. Compiling runs none of the code. A syntax error is ``FILE:LINE: error``; one a
Python 2 program makes (``print "x"``, ``except E, e:``) says that it is Python 2 code.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from proctor.environments.digests import declaration_digest
from proctor.errors import ProctorError
from proctor.pipeline.program_runs import SandboxProgramRunner
from proctor.protocols.codabench_settings import IngestionProtocol
from proctor.sandbox import create_sandbox
from proctor.services.local.environments import job_environment, store_of
from proctor.settings import Settings
from proctor.spec import Challenge
from proctor.spec.environment import EnvironmentSpec
from proctor.spec.programs import ProgramRequest
from proctor.spec.scorer import ProgramLimits
from proctor.store.runfolder import RunFolder

SAMPLE_FOLDERS = ("baseline",)
SOLUTIONS = Path("kit") / "solutions"
MAX_SOURCE_BYTES = 8 * 1024**2
COMPILE_S = 120.0
PYTHON2_SIGNS = (
    "Missing parentheses in call to 'print'",
    "Missing parentheses in call to 'exec'",
    "multiple exception types must be parenthesized",
    "leading zeros in decimal integer literals are not permitted",
)
PYTHON2 = "this is Python 2 code: Proctor's environments run Python 3, port it (2to3 -w FILE)"

SCRIPT = """\
import json, os, sys
out, roots, found = sys.argv[1], sys.argv[2:], []
for root in roots:
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", ".git"))  # links: not walked
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            if os.path.islink(path) or os.path.getsize(path) > MAX:
                continue
            try:
                with open(path, "rb") as source:
                    text = source.read()
                compile(text, path, "exec", dont_inherit=True)
            except SyntaxError as err:
                found.append([path, err.lineno or 0, type(err).__name__, str(err.msg)])
            except (OSError, ValueError, OverflowError, MemoryError, RecursionError) as err:
                found.append([path, 0, type(err).__name__, str(err)])
with open(out, "w") as answer:
    json.dump({"python": sys.version.split()[0], "errors": found}, answer)
""".replace("MAX", str(MAX_SOURCE_BYTES))


@dataclass(frozen=True, slots=True)
class ProgramFolder:
    """A folder of Python code the challenge runs: whose, where, in which environment."""

    folder: Path
    owner: str
    environment: EnvironmentSpec | None


@dataclass(frozen=True, slots=True)
class CompileError:
    """One file that does not compile: where (relative to the challenge) and why."""

    file: str
    line: int
    message: str
    owner: str

    @property
    def location(self) -> str:
        """``FILE:LINE`` (just ``FILE`` when the error has no line)."""
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(slots=True)
class CompileReport:
    """What compiling found: the errors, and notes on which Python compiled what."""

    errors: list[CompileError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def program_folders(challenge: Challenge) -> list[ProgramFolder]:
    """Every folder of Python code the challenge runs, each once, with its environment."""
    found: dict[Path, ProgramFolder] = {}

    def add(folder: Path, owner: str, environment: EnvironmentSpec | None) -> None:
        if folder.is_dir() and folder.resolve() not in found:
            found[folder.resolve()] = ProgramFolder(folder, owner, environment)

    for task in challenge.tasks:
        program = task.scoring_program
        scorer_environment = challenge.scorer_environment_of(task.name)
        if program is not None:
            add(program.program, f"scoring program of task {task.name}", scorer_environment)
            beside = program.concurrent_ingestion
            if beside is not None:
                what = f"ingestion program of task {task.name}"
                add(beside.program, what, scorer_environment)
        protocol = challenge.protocol
        ingestion = (
            protocol.program_of(task.name) if isinstance(protocol, IngestionProtocol) else None
        )
        if ingestion is not None:
            what = f"ingestion program of task {task.name}"
            add(ingestion.program, what, challenge.environment_of(task.name))
    entry_environment = challenge.environment_of(challenge.tasks[0].name)
    for sample in sample_folders(challenge.root):
        name = sample.relative_to(challenge.root).as_posix()
        add(sample, f"sample {name}", entry_environment)
    return list(found.values())


def sample_folders(root: Path) -> list[Path]:
    """The challenge's sample entries: ``baseline/`` and each of ``kit/solutions/``."""
    found = [root / name for name in SAMPLE_FOLDERS if (root / name).is_dir()]
    solutions = root / SOLUTIONS
    if solutions.is_dir():
        found += sorted(item for item in solutions.iterdir() if item.is_dir())
    return found


def compile_programs(challenge: Challenge, settings: Settings) -> CompileReport:
    """Compile every Python file of ``challenge``'s programs and samples (see the module)."""
    report = CompileReport()
    groups: dict[str, tuple[EnvironmentSpec | None, list[ProgramFolder]]] = {}
    for folder in program_folders(challenge):
        key = "host" if folder.environment is None else declaration_digest(folder.environment)
        groups.setdefault(key, (folder.environment, []))[1].append(folder)
    for environment, folders in groups.values():
        found = _compile_group(environment, folders, settings, report.notes)
        report.errors += _errors(challenge.root, folders, found)
    return report


def _compile_group(
    environment: EnvironmentSpec | None,
    folders: list[ProgramFolder],
    settings: Settings,
    notes: list[str],
) -> list[list[object]]:
    """Compile ``folders`` with ``environment``'s Python; the raw errors, mount paths kept."""
    mine = f"Proctor's own Python {sys.version.split()[0]}"
    built = store_of(settings).find(declaration_digest(environment)) if environment else None
    if environment is None:
        notes.append(f"programs on the host (environment: host) were compiled with {mine}")
        return _compile_on_host(folders)
    if built is None:
        notes.append(
            f"environment {environment.name!r} is not built yet: its programs were compiled "
            f"with {mine} (build it, `proctor env build`, to compile with its own)"
        )
        return _compile_on_host(folders)
    runner_root = job_environment(environment, built).root
    folder = RunFolder.create(settings.work_root, "compile")
    try:
        runner = SandboxProgramRunner(create_sandbox(settings), folder.scratch, root=runner_root)
        sources = _python_sources(folders, folder.root / "sources")
        roots = [f"/check/{index}" for index in range(len(folders))]
        request = ProgramRequest(
            argv=("python3", "-c", SCRIPT, "/out/answer.json", *roots),
            cwd="/",
            folders=((sources, "/check"),),
            env={"PYTHONDONTWRITEBYTECODE": "1"},
            limits=ProgramLimits(wall_s=COMPILE_S),
            wall_s=COMPILE_S,
            scores="/out",
            scores_names=("answer.json",),
        )
        try:
            result = runner(request)
        except ProctorError as err:
            notes.append(
                f"the sandbox could not compile the programs ({err}): compiled with {mine}"
            )
            return _compile_on_host(folders)
    finally:
        folder.discard()
    if result.scores_file is None:
        notes.append(
            f"environment {environment.name!r} could not compile the programs "
            f"({result.problem() or 'no answer'}): compiled with {mine} instead"
        )
        return _compile_on_host(folders)
    answer = json.loads(result.scores_file)
    notes.append(
        f"programs in environment {environment.name!r} compiled with its Python {answer['python']}"
    )
    return list(answer["errors"])


def _python_sources(folders: list[ProgramFolder], dest: Path) -> Path:
    """Copy only the Python files of ``folders`` into ``dest/INDEX/...`` (what the run sees).

    A sample's data or weights never reach the sandbox; links are not followed, files over
    ``MAX_SOURCE_BYTES`` are left out.
    """
    for index, item in enumerate(folders):
        (dest / str(index)).mkdir(parents=True, exist_ok=True)
        for folder, dirs, files in os.walk(item.folder, followlinks=False):
            dirs[:] = [name for name in dirs if name not in {"__pycache__", ".git"}]
            for name in files:
                path = Path(folder, name)
                info = path.lstat()
                if not name.endswith(".py") or not stat.S_ISREG(info.st_mode):
                    continue
                if info.st_size > MAX_SOURCE_BYTES:
                    continue
                target = dest / str(index) / path.relative_to(item.folder)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
    return dest


def _compile_on_host(folders: list[ProgramFolder]) -> list[list[object]]:
    """Compile with Proctor's own Python (a child process: nothing runs, no module cached)."""
    with tempfile.TemporaryDirectory(prefix="proctor-compile-") as work:
        out = Path(work) / "answer.json"
        mounts = [str(item.folder) for item in folders]
        subprocess.run(  # noqa: S603 - an argv list, no shell; compiling runs nothing
            [sys.executable, "-c", SCRIPT, str(out), *mounts],
            check=True,
            timeout=COMPILE_S,
            env={"PYTHONDONTWRITEBYTECODE": "1"},
        )
        errors: list[list[object]] = json.loads(out.read_text())["errors"]
    prefix = {str(item.folder): f"/check/{index}" for index, item in enumerate(folders)}
    for error in errors:
        for host, mount in prefix.items():
            if str(error[0]).startswith(host + "/"):
                error[0] = mount + str(error[0])[len(host) :]
    return errors


def _errors(
    root: Path, folders: list[ProgramFolder], raw: list[list[object]]
) -> Iterator[CompileError]:
    """The raw errors as :class:`CompileError`, their files relative to the challenge."""
    for path, line, kind, message in raw:
        index, _, rest = str(path).removeprefix("/check/").partition("/")
        folder = folders[int(index)]
        where = folder.folder / rest
        try:
            shown = where.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            shown = str(where)
        text = f"{kind}: {message} (the {folder.owner})"
        if any(sign in str(message) for sign in PYTHON2_SIGNS):
            text += f"; {PYTHON2}"
        elif kind == "TabError":
            text += "; indent with spaces only"
        yield CompileError(shown, int(str(line)), text, folder.owner)


def compile_warnings(challenge: Challenge, settings: Settings) -> list[str]:
    """``compile_programs`` as the import's warnings: each error, then the notes."""
    report = compile_programs(challenge, settings)
    errors = [f"{error.location}: does not compile: {error.message}" for error in report.errors]
    return errors + [f"compiled: {note}" for note in report.notes] if errors else []
