"""The shape of the ``protocol:`` block of a ``challenge.yaml``: a ``kind`` plus a mapping.

``spec`` knows no protocol kind. Each driver (``protocols``) carries the settings model of its
block, a :class:`ProtocolSettings` with its own time limits (a fit/predict budget is not a
``setup_s``/``case_s``); resource limits shared by every protocol stay under ``limits``.
:func:`parse_protocol` validates a block with the model the caller's table gives its kind
(``proctor.resolve`` hands in the driver table's); a kind with no model there is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
)


class LocatedError(ValueError):
    """A check across keys that knows which YAML path (``phases[0].tasks[1]``) is at fault."""

    def __init__(self, message: str, location: str) -> None:
        super().__init__(message)
        self.location = location


class Strict(BaseModel):
    """Base of every spec model: frozen, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)


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
