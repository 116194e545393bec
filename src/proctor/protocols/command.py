"""The ``command`` protocol (VISCERAL Anatomy3): one executable, run once per volume.

The entry ships one program (``execute_standard``); prep checks only that it is there and
executable. Each case runs it from the challenge's argv template, e.g.
``./execute_standard -i /data/CASE.nii.gz -o /output -r 58 86 ...``, with the entry's home at
``/entry`` (writable, the working folder), the split's inputs read-only at ``/data`` and a
size-capped output folder at ``/output`` that is empty before the case and emptied after it
(one per worker thread, reused: :mod:`proctor.protocols.output_folders`, so that a thread's
cases are one configuration and run on the session's case server).
Trusted host code takes the files out (:mod:`proctor.protocols.command_outputs`): names per the
convention, one per organ, each on the input volume's grid with values in [0, 1]. An organ
without a file is "not segmented"; a case with no usable file fails ("nothing usable came
out"), which is what the quiz, VISCERAL's format check on one training volume, stops on.
References are never shown to the entry.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from string import Formatter
from typing import Literal

from pydantic import Field, field_validator

from proctor.entries import Manifest
from proctor.errors import PlatformError
from proctor.formats.nifti_masks import Grid, read_grid
from proctor.formats.volumes import VolumeReadError
from proctor.protocols.base import (
    CaseRun,
    DriverContext,
    DriverWithoutAnswers,
    Preparation,
    run_limits,
)
from proctor.protocols.command_outputs import collect_case, match_names, same_folders
from proctor.protocols.output_folders import OutputFolders
from proctor.protocols.scripts import duration, launch_problem
from proctor.sandbox.base import Mount, Outcome, RunSpec
from proctor.spec.protocols import ProtocolSettings
from proctor.wording import noun

ARGV_FIELDS = frozenset({"program", "input", "output_dir", "task_ids", "case"})
OUTPUT_FIELDS = frozenset({"case", "task_id", "participant"})


def _fields(template: str) -> list[str]:
    return [name for _, name, _, _ in Formatter().parse(template) if name is not None]


class CommandProtocol(ProtocolSettings):
    """VISCERAL-style: the entry's one ``program``, run once per case from an argv template.

    ``argv`` items may hold ``{program}`` (``./PROGRAM``), ``{input}`` (the case's input file
    inside the sandbox), ``{output_dir}`` (an empty folder for this case) and ``{case}``; the
    item ``{task_ids}`` alone expands to one argv item per ID of ``task_ids`` (the RadLex IDs of
    the organs). ``input`` names a case's file in a split folder; ``output_pattern`` the files
    the program writes (``{case}``, ``{task_id}``, ``{participant}``), e.g.
    ``{case}_{task_id}_{participant}_1.nii.gz``. The quiz (the format check) runs the first
    ``quiz_cases`` public cases. Seconds: ``case_s`` per case, ``stage_s`` per quiz or exam.
    """

    kind: Literal["command"]
    program: str = "execute_standard"
    argv: tuple[str, ...] = (
        "{program}", "-i", "{input}", "-o", "{output_dir}", "-r", "{task_ids}",
    )  # fmt: skip
    input: str = "{case}.nii.gz"
    task_ids: tuple[str, ...] = Field(min_length=1)
    output_pattern: str = "{case}_{task_id}_{participant}_1.nii.gz"
    required_files: tuple[str, ...] = ()
    quiz_cases: int = Field(default=1, ge=1, strict=True)
    case_s: float = Field(default=300.0, gt=0, strict=True)
    stage_s: float = Field(default=7200.0, gt=0, strict=True)

    @field_validator("program")
    @classmethod
    def _plain_program(cls, program: str) -> str:
        path = Path(program)
        if not program or path.is_absolute() or ".." in path.parts:
            raise ValueError(f"{program!r} must be a plain relative path inside the entry")
        return program

    @field_validator("argv")
    @classmethod
    def _known_argv_fields(cls, argv: tuple[str, ...]) -> tuple[str, ...]:
        if not argv:
            raise ValueError("argv must name the program to run, e.g. ['{program}', ...]")
        for item in argv:
            unknown = set(_fields(item)) - ARGV_FIELDS
            if unknown:
                raise ValueError(
                    f"argv item {item!r} uses unknown {noun(len(unknown), 'field')} "
                    f"{sorted(unknown)}: use "
                    f"{', '.join('{' + name + '}' for name in sorted(ARGV_FIELDS))}"
                )
            if "task_ids" in _fields(item) and item != "{task_ids}":
                raise ValueError("{task_ids} must be an argv item of its own (it expands)")
        return argv

    @field_validator("input")
    @classmethod
    def _one_input_per_case(cls, template: str) -> str:
        fields = _fields(template)
        if fields != ["case"] or "/" in template:
            raise ValueError(f"{template!r} must name each case's file with one {{case}} field")
        return template

    @field_validator("task_ids")
    @classmethod
    def _plain_ids(cls, ids: tuple[str, ...]) -> tuple[str, ...]:
        for task_id in ids:
            if not task_id.isalnum():
                raise ValueError(f"task id {task_id!r} must be letters and digits only")
        if len(set(ids)) != len(ids):
            raise ValueError("task_ids must not repeat an ID")
        return ids

    @field_validator("output_pattern")
    @classmethod
    def _output_fields(cls, pattern: str) -> str:
        fields = _fields(pattern)
        if sorted(fields) != sorted(OUTPUT_FIELDS) or "/" in pattern:
            raise ValueError(
                f"{pattern!r} must name each output file with {{case}}, {{task_id}} and "
                "{participant}, once each, and no folder"
            )
        return pattern


HOME = "/entry"
DATA = "/data"
OUTPUT = "/output"


def _command_settings(settings: ProtocolSettings) -> CommandProtocol:
    if not isinstance(settings, CommandProtocol):
        raise TypeError(f"the command driver cannot run a {settings.kind!r} protocol")
    return settings


def list_inputs(settings: CommandProtocol, folder: Path) -> list[str]:
    """The cases of a split: every top-level file named by the ``input`` template, sorted."""
    prefix, _, suffix = settings.input.partition("{case}")
    cases = []
    for path in folder.iterdir():
        name = path.name
        fits = name.startswith(prefix) and name.endswith(suffix)
        if fits and len(name) > len(prefix) + len(suffix) and path.is_file():
            cases.append(name[len(prefix) : len(name) - len(suffix)])
    return sorted(cases)


def case_argv(settings: CommandProtocol, case: str) -> list[str]:
    """The argv of one case, ``{task_ids}`` expanded to one item per ID."""
    values = {
        "program": f"./{settings.program}",
        "input": f"{DATA}/{settings.input.format(case=case)}",
        "output_dir": OUTPUT,
        "case": case,
    }
    argv: list[str] = []
    for item in settings.argv:
        if item == "{task_ids}":
            argv.extend(settings.task_ids)
        else:
            argv.append(item.format(**values))
    return argv


class CommandDriver(DriverWithoutAnswers):
    """Runs the entry's one program per volume in the job's sandbox session."""

    kind = "command"
    settings_model = CommandProtocol
    summary = "VISCERAL: one executable run per volume from an argv template"
    case_noun = "volume"

    @property
    def protocol(self) -> CommandProtocol:
        """The challenge's command settings."""
        return _command_settings(self.context.settings)

    @classmethod
    def list_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """The volumes of ``folder`` (files named by the ``input`` template)."""
        return list_inputs(_command_settings(settings), folder)

    @classmethod
    def quiz_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """The format check runs on the first ``quiz_cases`` training volumes only."""
        protocol = _command_settings(settings)
        return list_inputs(protocol, folder)[: protocol.quiz_cases]

    @classmethod
    def output_template(cls, settings: ProtocolSettings) -> str:
        """Each case's organ files are stored in a folder named after the case."""
        return "{record}"

    @classmethod
    def manifest(cls, settings: ProtocolSettings) -> Manifest:
        """The program (executable) and any other files the challenge requires."""
        protocol = _command_settings(settings)
        return Manifest(required=protocol.required_files, executable=(protocol.program,))

    @property
    def case_s(self) -> float:
        """Seconds one run of the program may take."""
        return self.protocol.case_s

    @property
    def stage_s(self) -> float:
        """Seconds a whole quiz or exam may take."""
        return self.protocol.stage_s

    def prepare(self, home: Path, public_inputs: Path) -> Preparation:
        """Nothing runs: the manifest (program present and executable) was the check."""
        return Preparation(f"{self.protocol.program} check", 0.0, Outcome(exit_status=0))

    def __init__(self, context: DriverContext) -> None:
        super().__init__(context)
        self._outputs = OutputFolders(context.session, context.limits.output_bytes)

    def run_case(
        self, home: Path, inputs: Path, case: str, *, wall_s: float, store: Path
    ) -> CaseRun:
        """Run the program on one volume; store its checked organ files in folder ``store``."""
        shutil.rmtree(store, ignore_errors=True)
        output = self._outputs.folder(store.parent)
        try:
            outcome = self._run(case_argv(self.protocol, case), home, inputs, output, wall_s)
            if not outcome.succeeded:
                return CaseRun(case, outcome, None, self._failure(home, outcome, wall_s))
            problem = self._collect(output, inputs, case, store)
        finally:
            self._outputs.empty(output)
        if problem is not None:
            return CaseRun(case, outcome, None, problem)
        return CaseRun(case, outcome, store)

    def close(self) -> None:
        """Release the output folders."""
        self._outputs.close()

    def _run(
        self, argv: list[str], home: Path, inputs: Path, output: Path, wall_s: float
    ) -> Outcome:
        own = {"PROCTOR_DATA": DATA, "HOME": HOME, "TMPDIR": "/tmp", "LANG": "C.UTF-8"}  # noqa: S108 - the sandbox's own /tmp
        return self.context.session.run_case(
            RunSpec(
                argv,
                mounts=[
                    Mount(home, HOME, writable=True),
                    Mount(inputs, DATA),
                    Mount(output, OUTPUT, writable=True),
                    *self.context.extra_mounts,
                ],
                limits=run_limits(self.context.limits, self.context.parallel_runs, wall_s),
                env={**self.context.variables, **own},
                cwd=HOME,
            )
        )

    def _collect(self, output: Path, inputs: Path, case: str, store: Path) -> str | None:
        protocol = self.protocol
        names = match_names(
            output, pattern=protocol.output_pattern, case=case, asked=protocol.task_ids
        )
        if isinstance(names, str):
            return names
        if not names:
            shown = protocol.output_pattern.format(
                case=case, task_id="RADLEXID", participant="PARTICIPANT"
            )
            return (
                f"nothing usable came out: {protocol.program} wrote no file in the output "
                f"folder; write {shown} for each organ you segment"
            )
        collected = collect_case(
            output, store, names=names, grid=self._grid(inputs, case),
            max_bytes=self.context.limits.output_bytes,
        )  # fmt: skip
        problem = collected.problem or self.validate_output(store)
        if problem:
            shutil.rmtree(store, ignore_errors=True)
        return problem or None

    def _grid(self, inputs: Path, case: str) -> Grid:
        try:
            return read_grid(inputs / self.protocol.input.format(case=case))
        except VolumeReadError as err:
            raise PlatformError(f"the input volume of {case} cannot be read: {err}") from err

    def _failure(self, home: Path, outcome: Outcome, wall_s: float) -> str:
        program = self.protocol.program
        if outcome.timed_out:
            return f"{program} timed out after {duration(wall_s)} (the limit per volume)"
        return launch_problem(home, program, outcome) or f"{program} {outcome.describe()}"

    def same_output(self, first: Path, second: Path) -> bool:
        """True when both runs stored the same organ files with the same voxels."""
        return same_folders(first, second)
