"""The ``protocol:`` block of a ``challenge.yaml``: one settings model per entry protocol.

Each protocol carries its own time limits (a fit/predict budget is not a ``setup_s``/``case_s``);
resource limits shared by every protocol stay under ``limits``. Here the block is a ``kind``
plus a mapping: :func:`parse_protocol` validates it with the settings model the caller's table
gives its kind (``protocols.registry``, where each driver carries its model, hands that table
in). The built-in models are defined here; a kind with no model in the table is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from string import Formatter
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)


class LocatedError(ValueError):
    """A check across keys that knows which YAML path (``phases[0].tasks[1]``) is at fault."""

    def __init__(self, message: str, location: str) -> None:
        super().__init__(message)
        self.location = location


class Strict(BaseModel):
    """Base of every spec model: frozen, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_record_template(template: str) -> str:
    """A plain relative file: one per record (only ``{record}`` fields) or one shared file.

    A shared file (no field at all) is the 2015-2017 ``answers.txt``, one line per record.
    """
    fields = [name for _, name, _, _ in Formatter().parse(template) if name is not None]
    if any(name != "record" for name in fields):
        raise ValueError(
            f"{template!r} must name each record's own file with {{record}} (or one shared "
            "file, with no field) and no other field"
        )
    rendered = Path(template.format(record="r"))
    if rendered.is_absolute() or ".." in rendered.parts:
        raise ValueError(f"{template!r} must be a plain relative path inside the entry's home")
    return template


_FOLDER_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class ProtocolSettings(Strict):
    """Base of every protocol block; ``kind`` picks the driver.

    A block naming files of the challenge (an ingestion program) makes them absolute in
    :meth:`resolved`; one naming tasks checks them in :meth:`check_tasks`. Both raise
    ``LocatedError`` with the key's path inside the block.
    """

    kind: str

    def resolved(self, root: Path) -> ProtocolSettings:
        """The block with the challenge's folders it names made absolute (below ``root``)."""
        return self

    def check_tasks(self, tasks: tuple[str, ...]) -> None:
        """Refuse a block naming a task the challenge does not have (none is named here)."""


class CompareSpec(Strict):
    """How quiz outputs are compared with the answers shipped in the entry.

    ``exact``: byte for byte (PhysioNet 2014's ``cmp``). ``lines``: line by line, ignoring line
    endings and surrounding white space (2017's ``answers.txt``). ``numeric``: one number per
    line, equal within ``tolerance`` (absolute). ``json``: one JSON document each, equal as
    values (key order and spacing ignored), numbers within ``tolerance``.
    """

    kind: Literal["exact", "lines", "numeric", "json"] = "exact"
    tolerance: float = Field(default=0.0, ge=0.0, strict=True)


class RecordsProtocol(ProtocolSettings):
    """PhysioNet sandbox: ``setup`` once, then ``next RECORD`` per case in the entry's home.

    ``output`` and ``answers`` are templates with ``{record}``: the file ``next`` writes in its
    working folder, and the expected output shipped in the entry for each quiz record. An
    ``output`` without ``{record}`` (``answers.txt``, as in 2015-2017) is one shared file to
    which ``next`` appends a line ``RECORD,ANSWER`` per record; ``answers`` may then be one
    shared file of such lines too (the entry's ``answers.txt``), compared line by line.
    Seconds: ``setup_s`` for the setup script, ``case_s`` for one case, ``stage_s`` for a whole
    quiz or exam.
    """

    kind: Literal["records"]
    setup: str = "setup.sh"
    next: str = "next.sh"
    output: str = "{record}.vec"
    answers: str | None = "answers/{record}.vec"
    compare: CompareSpec = CompareSpec()
    required_files: tuple[str, ...] = ("setup.sh", "next.sh")
    executable_files: tuple[str, ...] = ("setup.sh", "next.sh")
    setup_s: float = Field(default=300.0, gt=0, strict=True)
    case_s: float = Field(default=20.0, gt=0, strict=True)
    stage_s: float = Field(default=3600.0, gt=0, strict=True)

    @field_validator("output", "answers")
    @classmethod
    def _one_file_per_record(cls, template: str | None) -> str | None:
        return None if template is None else _check_record_template(template)

    @field_validator("answers")
    @classmethod
    def _shared_answers_need_shared_output(
        cls, answers: str | None, info: ValidationInfo
    ) -> str | None:
        output = info.data.get("output", "")
        if answers is not None and "{record}" not in answers and "{record}" in output:
            raise ValueError(
                f"{answers!r} is one shared file, which only an output appended to by every "
                "record (an output without {record}, e.g. answers.txt) can match"
            )
        return answers

    @property
    def appended(self) -> str | None:
        """The shared file ``next`` appends one line per record to, or None (one file each)."""
        return None if "{record}" in self.output else self.output


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
                    f"argv item {item!r} uses unknown field(s) {sorted(unknown)}: use "
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


class PythonModelProtocol(ProtocolSettings):
    """AutoML-style (AutoWSL): a harness drives the entry's ``model.py`` on each dataset.

    A case is one dataset folder (``info.json``, ``train.data``, ``train.solution``,
    ``test.data``). ``Model(info)`` trains and saves in one process, loads and predicts in a
    fresh one; each process first loads the data within ``load_s`` seconds, then its clock
    starts: the dataset's ``time_budget`` (training) or ``pred_time_budget`` (prediction) from
    its ``info.json``, else ``time_budget_s`` / ``pred_time_budget_s``. ``max_budget_s`` caps
    any budget a dataset declares; ``prep_s`` is the import check of ``model.py``, ``stage_s``
    a whole quiz or exam. ``output`` names the stored prediction (CSV, header ``label``).
    """

    kind: Literal["python_model"]
    module: str = "model.py"
    output: str = "{record}.predict"
    load_s: float = Field(default=300.0, gt=0, strict=True)
    prep_s: float = Field(default=60.0, gt=0, strict=True)
    time_budget_s: float = Field(default=1200.0, gt=0, strict=True)
    pred_time_budget_s: float = Field(default=600.0, gt=0, strict=True)
    max_budget_s: float = Field(default=3600.0, gt=0, strict=True)
    stage_s: float = Field(default=7200.0, gt=0, strict=True)

    @field_validator("module")
    @classmethod
    def _plain_module(cls, module: str) -> str:
        if "/" in module or not module.endswith(".py") or module.startswith("."):
            raise ValueError(f"{module!r} must be a .py file at the top of the entry")
        return module

    @field_validator("output")
    @classmethod
    def _one_file_per_dataset(cls, template: str) -> str:
        return _check_record_template(template)


class PredictionsProtocol(ProtocolSettings):
    """Kaggle-style: the entry is prediction files made on public inputs; no code runs.

    The upload holds ``public_folder/CASE/`` (predictions on the public split, scored at the
    quiz against public references) and ``hidden_folder/CASE/`` (predictions on the hidden
    split's public inputs, scored against hidden references). A case is named by its inputs
    folder (``data/test/scenario1-main`` → ``scenario1-main``). Every prediction file matches
    one of ``file_patterns`` (shell patterns), is UTF-8 text and at most ``file_bytes``; the
    whole upload is at most ``upload_bytes``. Besides the split folders only ``DRYRUN`` and
    ``other_files`` may lie at the top of the upload.
    """

    kind: Literal["predictions"]
    public_folder: str = Field(default="dev", pattern=_FOLDER_NAME)
    hidden_folder: str = Field(default="test", pattern=_FOLDER_NAME)
    file_patterns: tuple[str, ...] = Field(default=("*",), min_length=1)
    other_files: tuple[str, ...] = ("README.md", "AUTHORS.txt", "LICENSE.txt")
    file_bytes: int = Field(default=16 * 1024**2, gt=0, strict=True)
    upload_bytes: int = Field(default=64 * 1024**2, gt=0, strict=True)

    @model_validator(mode="after")
    def _two_folders(self) -> PredictionsProtocol:
        if self.public_folder == self.hidden_folder:
            raise LocatedError("must differ from public_folder", "hidden_folder")
        return self


class SingleFileProtocol(ProtocolSettings):
    """EvalAI-style: the entry is one file (uploaded as a zip holding it); no code runs.

    The same file is scored on every split and task of the phase (the scorer picks what it
    needs: EvalAI's ``evaluate`` returns every split at once). Its name matches one of
    ``file_patterns`` (shell patterns) and it is at most ``file_bytes``; any content (JSON,
    CSV, a compressed array...) is the scorer's to read.
    """

    kind: Literal["single_file"]
    file_patterns: tuple[str, ...] = Field(default=("*",), min_length=1)
    file_bytes: int = Field(default=64 * 1024**2, gt=0, strict=True)


class ResultsProtocol(ProtocolSettings):
    """Codabench/CodaLab result submissions: the whole upload is the predictions folder.

    No code runs. There is no public split to score: the scoring program sees the upload as
    its outputs folder (Codabench's ``/app/input/res``) for every task of the phase. The
    upload is at most ``upload_bytes``.
    """

    kind: Literal["results"]
    upload_bytes: int = Field(default=256 * 1024**2, gt=0, strict=True)


ProtocolModels = Mapping[str, type[ProtocolSettings]]
"""The settings model of each protocol kind Proctor can run, by kind."""

PROTOCOL_MODELS = "protocol_models"
"""The key of the validation context holding the :data:`ProtocolModels` of a load."""


def describe_error(error: Any) -> tuple[str, str]:
    """(YAML path, message) of one pydantic error, in the words ``challenge.yaml`` users need."""
    location = yaml_location(tuple(error["loc"]))
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, LocatedError):
        location = ".".join(part for part in (location, cause.location) if part)
    kind = error["type"]
    if kind == "extra_forbidden":
        return location, "unknown key: remove it or fix its spelling"
    if kind == "missing":
        return location, "required key is missing"
    return location, str(error["msg"]).removeprefix("Value error, ")


def yaml_location(loc: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as a YAML path, e.g. ``tasks[0].public_inputs``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _is_union_tag(part):
            continue  # pydantic names the branch of a union it tried; not a YAML key
        else:
            out += f".{part}" if out else str(part)
    return out


def _is_union_tag(part: str) -> bool:
    return "[" in part or "(" in part or part[:1].isupper()


def is_other_branch(error: Any) -> bool:
    """True for the error of a union branch the value was not meant for (``literal['host']``)."""
    return any(isinstance(p, str) and p.startswith("literal[") for p in error["loc"])


def parse_protocol(value: Any, models: ProtocolModels) -> ProtocolSettings:
    """Validate a ``protocol:`` block with the model ``models`` gives its kind; refuse others."""
    if isinstance(value, ProtocolSettings):
        return value
    if not isinstance(value, dict):
        raise LocatedError("must be a mapping with a 'kind' key", "")
    kind = value.get("kind")
    if not isinstance(kind, str) or kind not in models:
        choices = ", ".join(sorted(models))
        raise LocatedError(f"unknown protocol kind {kind!r}: use one of {choices}", "kind")
    model = models[kind]
    try:
        parsed = model.model_validate(value)
    except ValidationError as err:
        location, message = describe_error(err.errors()[0])
        raise LocatedError(message, location) from None
    if not isinstance(parsed, ProtocolSettings):
        raise TypeError(f"the settings model of protocol {kind!r} must derive ProtocolSettings")
    return parsed
