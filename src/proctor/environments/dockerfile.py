"""A participant's ``Dockerfile``, read without Docker: its stages, instructions and bases.

``parse_dockerfile`` reads the text into stages (``FROM`` … ``AS name``), each a list of
instructions with their flags and their JSON (exec) form where given; line continuations,
comments and the global ``ARG`` defaults that ``FROM`` lines may use are applied. Nothing runs
here. ``check_bases`` refuses a ``FROM`` that names neither an earlier stage nor a base the
challenge offers, listing the offered ones. ``read_dockerignore`` and ``ignored`` leave out of
the context what a ``.dockerignore`` names. ``image_name`` is the one spelling of an image
reference (``python:3.10`` and ``docker.io/library/python:3.10`` are the same base).
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from proctor.errors import ImageBuildError

MAX_BYTES = 256 * 1024
KNOWN = frozenset({
    "FROM", "ARG", "ENV", "RUN", "COPY", "ADD", "WORKDIR", "USER", "CMD", "ENTRYPOINT",
    "LABEL", "EXPOSE", "VOLUME", "STOPSIGNAL", "HEALTHCHECK", "SHELL", "MAINTAINER",
})  # fmt: skip
REFUSED = {
    "ONBUILD": "ONBUILD runs in images built later; Proctor builds only this one",
}
FLAGGED = {"FROM": {"platform"}, "COPY": {"from", "chown", "link"}, "ADD": {"chown", "link"}}
"""The ``--flag=value`` options each instruction accepts (others are refused, named)."""
FLAG_FIXES = {
    "chmod": "RUN chmod after the COPY",
    "mount": "builds have no cache or secret mounts; COPY what the step needs",
    "network": "builds have no network; put what the step fetches in the entry",
    "security": "builds run without privileges",
}
_VARIABLE = re.compile(
    r"\\\$|\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))"
)
_FLAG = re.compile(r"--([a-z-]+)=(\S*)")


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction: its keyword, raw arguments, ``--flags``, exec form and line number."""

    keyword: str
    args: str
    line: int
    flags: Mapping[str, str] = field(default_factory=dict)
    exec_form: tuple[str, ...] | None = None

    def where(self) -> str:
        """``Dockerfile, line N (KEYWORD)`` for messages."""
        return f"Dockerfile, line {self.line} ({self.keyword})"


@dataclass(frozen=True, slots=True)
class Stage:
    """A build stage: the base it starts ``FROM`` (expanded), its name, its instructions."""

    base: str
    name: str | None
    line: int
    instructions: tuple[Instruction, ...]


@dataclass(frozen=True, slots=True)
class Dockerfile:
    """A parsed Dockerfile: its stages in order and the global ``ARG`` defaults."""

    stages: tuple[Stage, ...]
    global_args: Mapping[str, str]

    def stage_index(self, name: str, before: int) -> int | None:
        """The index of the stage called ``name`` (or numbered so) before stage ``before``."""
        for index, stage in enumerate(self.stages[:before]):
            if (stage.name or "").lower() == name.lower() or str(index) == name:
                return index
        return None


def image_name(reference: str) -> str:
    """The canonical spelling of an image reference (lower case, Docker Hub prefixes off).

    ``python`` is ``python:latest``; ``docker.io/library/python:3.10`` is ``python:3.10``.
    """
    name = reference.strip().lower()
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        name = name.removeprefix(prefix)
    name = name.removeprefix("library/")
    last = name.rsplit("/", 1)[-1]
    if ":" not in last and "@" not in last:
        name += ":latest"
    return name


def expand(text: str, values: Mapping[str, str]) -> str:
    r"""``text`` with ``$NAME``, ``${NAME}``, ``${NAME:-word}`` and ``${NAME:+word}`` replaced.

    Unknown names become empty, as Docker does; ``\\$`` is a literal dollar sign.
    """

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "\\$":
            return "$"
        name = match.group(1) or match.group(4)
        value = values.get(name)
        if match.group(2) == "-":
            return value if value else match.group(3)
        if match.group(2) == "+":
            return match.group(3) if value else ""
        return value or ""

    return _VARIABLE.sub(one, text)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each instruction: continuations joined, comments out."""
    found: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and pending):
            continue  # comments, and blank lines inside a continuation, are dropped
        if not stripped:
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1])
            continue
        pending.append(stripped)
        found.append((start, " ".join(part.strip() for part in pending)))
        pending = []
    if pending:
        found.append((start, " ".join(part.strip() for part in pending)))
    return found


def _exec_form(args: str) -> tuple[str, ...] | None:
    if not args.startswith("["):
        return None
    try:
        value = json.loads(args)
    except ValueError:
        return None
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def _instruction(number: int, line: str) -> Instruction:
    keyword, _, rest = line.partition(" ")
    keyword = keyword.upper()
    rest = rest.strip()
    if keyword in REFUSED:
        raise ImageBuildError(f"Dockerfile, line {number}: {REFUSED[keyword]}; remove it")
    if keyword not in KNOWN:
        raise ImageBuildError(
            f"Dockerfile, line {number}: unknown instruction {keyword!r}; "
            f"use one of {', '.join(sorted(KNOWN))}"
        )
    flags: dict[str, str] = {}
    while rest.startswith("--"):
        match = _FLAG.match(rest)
        if match is None:
            raise ImageBuildError(f"Dockerfile, line {number}: {rest.split()[0]!r} needs a value")
        name = match.group(1)
        if name not in FLAGGED.get(keyword, set()):
            fix = FLAG_FIXES.get(name, "remove the flag")
            raise ImageBuildError(
                f"Dockerfile, line {number}: {keyword} --{name} is not supported ({fix})"
            )
        flags[name] = match.group(2)
        rest = rest[match.end() :].strip()
    if re.match(r"<<-?[\"']?[A-Za-z_]", rest):
        raise ImageBuildError(
            f"Dockerfile, line {number}: here-documents are not supported; write the lines "
            "into a file of the entry and COPY it"
        )
    return Instruction(keyword, rest, number, flags, _exec_form(rest))


def parse_dockerfile(text: str) -> Dockerfile:
    """Read a Dockerfile's text into stages; an ``ImageBuildError`` names the bad line."""
    if len(text.encode()) > MAX_BYTES:
        raise ImageBuildError(f"the Dockerfile is over {MAX_BYTES} bytes; keep it short")
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    current: list[Instruction] = []
    head: tuple[str, str | None, int] | None = None
    for number, line in _logical_lines(text):
        instruction = _instruction(number, line)
        if instruction.keyword == "FROM":
            if head is not None:
                stages.append(Stage(head[0], head[1], head[2], tuple(current)))
            head, current = _from(instruction, global_args), []
        elif head is None:
            if instruction.keyword != "ARG":
                raise ImageBuildError(
                    f"Dockerfile, line {number}: {instruction.keyword} before any FROM; "
                    "a Dockerfile starts with FROM (only ARG may come before it)"
                )
            name, value = arg_default(instruction, global_args)
            global_args[name] = value or ""
        else:
            current.append(instruction)
    if head is None:
        raise ImageBuildError("the Dockerfile has no FROM line; start it with FROM BASE")
    stages.append(Stage(head[0], head[1], head[2], tuple(current)))
    return Dockerfile(tuple(stages), global_args)


def arg_default(instruction: Instruction, values: Mapping[str, str]) -> tuple[str, str | None]:
    """The name and default (expanded, None if none) of an ``ARG`` instruction."""
    name, has_default, default = instruction.args.partition("=")
    name = name.strip()
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ImageBuildError(f"{instruction.where()}: {name!r} is not a variable name")
    if not has_default:
        return name, None
    words = shlex.split(default) if default.strip() else [""]
    return name, expand(words[0] if words else "", values)


def _from(instruction: Instruction, global_args: Mapping[str, str]) -> tuple[str, str | None, int]:
    words = expand(instruction.args, global_args).split()
    if len(words) == 3 and words[1].lower() == "as":
        return words[0], words[2], instruction.line
    if len(words) == 1:
        return words[0], None, instruction.line
    raise ImageBuildError(
        f"{instruction.where()}: write FROM BASE or FROM BASE AS NAME, not {instruction.args!r}"
    )


def check_bases(dockerfile: Dockerfile, offered: Collection[str]) -> list[str | int]:
    """Each stage's base: an offered name (canonical) or an earlier stage's index.

    A ``FROM`` naming anything else is an ``ImageBuildError`` listing the offered bases.
    """
    canonical = {image_name(name): name for name in offered}
    found: list[str | int] = []
    for index, stage in enumerate(dockerfile.stages):
        earlier = dockerfile.stage_index(stage.base, index)
        if earlier is not None:
            found.append(earlier)
            continue
        name = image_name(stage.base)
        if name not in canonical:
            listed = ", ".join(sorted(offered)) or "none"
            raise ImageBuildError(
                f"Dockerfile, line {stage.line}: FROM {stage.base} is not a base this "
                f"challenge offers; use one of: {listed}"
            )
        found.append(name)
    return found


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One ``.dockerignore`` line: its pattern as a regular expression, and ``!`` (keep)."""

    pattern: re.Pattern[str]
    keep: bool


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Docker's pattern (Go's ``filepath.Match`` plus ``**``) as a regular expression."""
    out, index = "", 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out, index = out + "(?:.*/)?", index + 3
        elif pattern.startswith("**", index):
            out, index = out + ".*", index + 2
        elif char == "*":
            out, index = out + "[^/]*", index + 1
        elif char == "?":
            out, index = out + "[^/]", index + 1
        elif char == "[" and "]" in pattern[index + 1 :]:
            end = pattern.index("]", index + 1)
            body = pattern[index + 1 : end].replace("\\", "\\\\")
            out, index = out + f"[{'^' + body[1:] if body.startswith('!') else body}]", end + 1
        else:
            out, index = out + re.escape(char), index + 1
    return re.compile(out + r"\Z")


def read_dockerignore(text: str) -> list[IgnoreRule]:
    """The rules of a ``.dockerignore`` (comments and blank lines dropped, paths cleaned)."""
    rules = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        keep = line.startswith("!")
        cleaned = posixpath.normpath("/" + line.removeprefix("!").strip()).lstrip("/")
        if cleaned and cleaned != ".":
            rules.append(IgnoreRule(_glob_regex(cleaned), keep))
    return rules


def ignored(rules: Sequence[IgnoreRule], relative: str) -> bool:
    """Whether ``relative`` (a path in the context) is left out of it.

    The last rule that matches the path, or one of the folders above it, decides.
    """
    parts = relative.split("/")
    candidates = ["/".join(parts[: count + 1]) for count in range(len(parts))]
    verdict = False
    for rule in rules:
        if any(rule.pattern.match(candidate) for candidate in candidates):
            verdict = not rule.keep
    return verdict
