"""The ``protocol:`` block of a ``challenge.yaml``: one settings model per entry protocol.

Each protocol carries its own time limits (a fit/predict budget is not a ``setup_s``/``case_s``);
resource limits shared by every protocol stay under ``limits``. The block is validated by the
model of its ``kind``: built-in kinds are defined here, kinds added by a plug-in driver bring
their model with their :class:`proctor.types.ProtocolDeclaration`. A kind without a driver is
refused when the file loads.
"""

from __future__ import annotations

from pathlib import Path
from string import Formatter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from proctor.types import BUILTIN_PROTOCOLS, runnable_protocols


class LocatedError(ValueError):
    """A check across keys that knows which YAML path (``phases[0].tasks[1]``) is at fault."""

    def __init__(self, message: str, location: str) -> None:
        super().__init__(message)
        self.location = location


class Strict(BaseModel):
    """Base of every spec model: frozen, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_record_template(template: str) -> str:
    """A template naming one plain relative file per record: only ``{record}`` fields."""
    fields = [name for _, name, _, _ in Formatter().parse(template) if name is not None]
    if not fields or any(name != "record" for name in fields):
        raise ValueError(
            f"{template!r} must name each record's own file with {{record}} and no other field"
        )
    rendered = Path(template.format(record="r"))
    if rendered.is_absolute() or ".." in rendered.parts:
        raise ValueError(f"{template!r} must be a plain relative path inside the entry's home")
    return template


class ProtocolSettings(Strict):
    """Base of every protocol block; ``kind`` picks the driver."""

    kind: str


class CompareSpec(Strict):
    """How quiz outputs are compared with the answers shipped in the entry.

    ``exact``: byte for byte (PhysioNet 2014's ``cmp``). ``lines``: line by line, ignoring line
    endings and surrounding white space (2017's ``answers.txt``). ``numeric``: one number per
    line, equal within ``tolerance`` (absolute).
    """

    kind: Literal["exact", "lines", "numeric"] = "exact"
    tolerance: float = Field(default=0.0, ge=0.0, strict=True)


class RecordsProtocol(ProtocolSettings):
    """PhysioNet sandbox: ``setup`` once, then ``next RECORD`` per case in the entry's home.

    ``output`` and ``answers`` are templates with ``{record}``: the file ``next`` writes in its
    working folder, and the expected output shipped in the entry for each quiz record.
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


class CommandProtocol(ProtocolSettings):
    """VISCERAL-style: one argv template per case (no driver yet)."""

    kind: Literal["command"]
    argv: tuple[str, ...]
    output_pattern: str = ""


class PythonModelProtocol(ProtocolSettings):
    """AutoML-style: a ``model.py`` driven by a harness (no driver yet)."""

    kind: Literal["python_model"]
    module: str = "model.py"


class PredictionsProtocol(ProtocolSettings):
    """Prediction files, no code (no driver yet)."""

    kind: Literal["predictions"]
    files: tuple[str, ...] = ()


BUILTIN_SETTINGS: dict[str, type[ProtocolSettings]] = {
    "records": RecordsProtocol,
    "command": CommandProtocol,
    "python_model": PythonModelProtocol,
    "predictions": PredictionsProtocol,
}


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


def parse_protocol(value: Any) -> ProtocolSettings:
    """Validate a ``protocol:`` block with the model of its kind; refuse kinds with no driver."""
    if isinstance(value, ProtocolSettings):
        return value
    if not isinstance(value, dict):
        raise LocatedError("must be a mapping with a 'kind' key", "")
    kind = value.get("kind")
    runnable = runnable_protocols()
    if not isinstance(kind, str) or kind not in runnable:
        choices = ", ".join(sorted(runnable))
        if isinstance(kind, str) and kind in BUILTIN_PROTOCOLS:
            message = f"protocol kind {kind!r} has no driver in this version of Proctor yet"
        else:
            message = f"unknown protocol kind {kind!r}"
        raise LocatedError(f"{message}: use one of {choices}", "kind")
    model = runnable[kind].settings or BUILTIN_SETTINGS[kind]
    try:
        parsed = model.model_validate(value)
    except ValidationError as err:
        location, message = describe_error(err.errors()[0])
        raise LocatedError(message, location) from None
    if not isinstance(parsed, ProtocolSettings):
        raise TypeError(f"the settings model of protocol {kind!r} must derive ProtocolSettings")
    return parsed
