"""The typed, frozen picture of a ``challenge.yaml``.

Every model forbids unknown keys, so a typo is an error that names its YAML path instead of a
setting silently left at its default. Paths are relative to the challenge folder until
``loader.load_challenge`` resolves them.
"""

from __future__ import annotations

from pathlib import Path
from string import Formatter
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
Disclosure = Literal["full", "errors", "counts", "none"]
StageName = Literal["prep", "quiz", "exam", "score"]


class LocatedError(ValueError):
    """A check across keys that knows which YAML path (``phases[0].tasks[1]``) is at fault."""

    def __init__(self, message: str, location: str) -> None:
        super().__init__(message)
        self.location = location


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


class Strict(BaseModel):
    """Base of every spec model: frozen, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class CompareSpec(Strict):
    """How quiz outputs are compared with the answers shipped in the entry.

    ``exact``: byte for byte (PhysioNet 2014's ``cmp``). ``lines``: line by line, ignoring line
    endings and surrounding white space (2017's ``answers.txt``). ``numeric``: one number per
    line, equal within ``tolerance`` (absolute).
    """

    kind: Literal["exact", "lines", "numeric"] = "exact"
    tolerance: float = Field(default=0.0, ge=0.0)


class RecordsProtocol(Strict):
    """PhysioNet sandbox: ``setup`` once, then ``next RECORD`` per case in the entry's home.

    ``output`` and ``answers`` are templates with ``{record}``: the file ``next`` writes in its
    working folder, and the expected output shipped in the entry for each quiz record.
    """

    kind: Literal["records"]
    setup: str = "setup.sh"
    next: str = "next.sh"
    output: str = "{record}.vec"
    answers: str | None = "answers/{record}.vec"
    compare: CompareSpec = CompareSpec()
    required_files: tuple[str, ...] = ("setup.sh", "next.sh")
    executable_files: tuple[str, ...] = ("setup.sh", "next.sh")

    @field_validator("output", "answers")
    @classmethod
    def _one_file_per_record(cls, template: str | None) -> str | None:
        return None if template is None else _check_record_template(template)


class CommandProtocol(Strict):
    """VISCERAL-style: one argv template per case (not implemented yet)."""

    kind: Literal["command"]
    argv: tuple[str, ...]
    output_pattern: str = ""


class PythonModelProtocol(Strict):
    """AutoML-style: a ``model.py`` driven by a harness (not implemented yet)."""

    kind: Literal["python_model"]
    module: str = "model.py"


class PredictionsProtocol(Strict):
    """Prediction files, no code (not implemented yet)."""

    kind: Literal["predictions"]
    files: tuple[str, ...] = ()


Protocol = Annotated[
    RecordsProtocol | CommandProtocol | PythonModelProtocol | PredictionsProtocol,
    Field(discriminator="kind"),
]


class Task(Strict):
    """One dataset: public inputs (quiz), hidden inputs (exam) and hidden references (score).

    ``scorer`` names a built-in scorer; ``metrics`` the subset of its metrics to report (all
    when empty).
    """

    name: Identifier
    public_inputs: Path
    hidden_inputs: Path | None = None
    hidden_references: Path | None = None
    scorer: str
    metrics: tuple[str, ...] = ()
    title: str = ""


class StageLimits(Strict):
    """Limits of the evaluation, in seconds and bytes.

    ``setup_s``: setup script; ``case_s``: one case; ``stage_s``: a whole quiz or exam stage;
    ``home_bytes``: the entry's writable home; ``output_bytes``: one case's output file.
    """

    setup_s: float = Field(default=300.0, gt=0)
    case_s: float = Field(default=20.0, gt=0)
    stage_s: float = Field(default=3600.0, gt=0)
    memory_bytes: int = Field(default=2 * 1024**3, gt=0)
    home_bytes: int = Field(default=1024**3, gt=0)
    tmp_bytes: int = Field(default=256 * 1024**2, gt=0)
    processes: int = Field(default=128, gt=0)
    output_bytes: int = Field(default=64 * 1024**2, gt=0)
    log_bytes: int = Field(default=1024**2, gt=0)


class DisclosureSpec(Strict):
    """What a participant sees of each stage.

    ``full`` diagnostics, ``errors`` only the error lines, ``counts`` only counts of failures and
    timeouts, ``none`` only pass or fail.
    """

    prep: Disclosure = "full"
    quiz: Disclosure = "full"
    exam: Disclosure = "counts"
    score: Disclosure = "full"


class Parallelism(Strict):
    """Cases run at once; 0 means one per CPU core."""

    jobs: int = Field(default=0, ge=0)


class LeaderboardSpec(Strict):
    """How entries are ordered: each task's ``metric`` ranks them, the mean rank orders them."""

    metric: str
    higher_is_better: bool = True


class Phase(Strict):
    """A period of the challenge with its own tasks.

    ``determinism_cases``: after the exam, rerun that many cases and report whether their
    outputs are identical (0: no check).
    """

    name: Identifier
    tasks: tuple[str, ...]
    title: str = ""
    determinism_cases: int = Field(default=0, ge=0)


class Challenge(Strict):
    """Everything an organizer decides about one challenge."""

    name: Identifier
    title: str
    description: str = ""
    protocol: Protocol
    tasks: tuple[Task, ...] = Field(min_length=1)
    limits: StageLimits = StageLimits()
    disclosure: DisclosureSpec = DisclosureSpec()
    parallelism: Parallelism = Parallelism()
    leaderboard: LeaderboardSpec | None = None
    phases: tuple[Phase, ...] = Field(min_length=1)
    root: Path = Field(default=Path("."), exclude=True)

    @model_validator(mode="after")
    def _names_are_consistent(self) -> Challenge:
        task_names = [t.name for t in self.tasks]
        for index, name in enumerate(task_names):
            if name in task_names[:index]:
                raise LocatedError(
                    f"task name {name!r} is used twice: give each task its own name",
                    f"tasks[{index}].name",
                )
        phase_names = [p.name for p in self.phases]
        for index, name in enumerate(phase_names):
            if name in phase_names[:index]:
                raise LocatedError(
                    f"phase name {name!r} is used twice: give each phase its own name",
                    f"phases[{index}].name",
                )
        for index, phase in enumerate(self.phases):
            for position, task in enumerate(phase.tasks):
                if task not in task_names:
                    raise LocatedError(
                        f"phase {phase.name!r} names unknown task {task!r} "
                        f"(tasks: {', '.join(task_names)})",
                        f"phases[{index}].tasks[{position}]",
                    )
        return self

    def task(self, name: str) -> Task:
        """The task called ``name``."""
        return next(t for t in self.tasks if t.name == name)

    def phase(self, name: str | None) -> Phase:
        """The phase called ``name``; the last phase (the final one) when ``name`` is None."""
        if name is None:
            return self.phases[-1]
        for phase in self.phases:
            if phase.name == name:
                return phase
        known = ", ".join(p.name for p in self.phases)
        raise KeyError(f"no phase {name!r} in challenge {self.name!r} (phases: {known})")
