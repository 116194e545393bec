"""The ``records`` protocol (PhysioNet sandbox): ``setup.sh`` once, ``next.sh RECORD`` per case.

The entry's home is a size-capped writable workspace shown at ``/entry`` (also the working
folder); the case inputs are shown read-only at ``/data`` and named by ``PROCTOR_DATA``, and the
record's own files are linked into the working folder while its case runs, as the official
``next.sh`` contract has them (``record_files``). After a case, its declared output
(``{record}.vec``), or the line it appended to a shared ``answers.txt`` (``answer_lines``), is
taken out of the home by trusted host code and stored outside every sandbox. References are
never shown to the entry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from proctor.entries import Manifest
from proctor.protocols.answer_lines import compare_lines, last_line
from proctor.protocols.base import CaseRun, Driver, DriverContext, Preparation, run_limits
from proctor.protocols.compare import CompareSpec, compare_files
from proctor.protocols.outputs import (
    check_record_template,
    checked_file,
    collect_output,
    collect_output_to,
    remove_output,
)
from proctor.protocols.record_files import RecordFiles, linked_into
from proctor.protocols.scripts import duration, launch_problem
from proctor.sandbox.base import Limits, Mount, Outcome, RunSpec
from proctor.spec.protocols import ProtocolSettings

HOME = "/entry"
DATA = "/data"
NO_ANSWERS = "none"
"""``answers: none``: the quiz checks each output and compares it with nothing."""


def default_answers(output: str) -> str:
    """The answers an entry ships when ``answers`` is unset: they follow ``output``.

    One file per record goes under ``answers/`` (``{record}.forecast`` →
    ``answers/{record}.forecast``); a shared file appended to (``answers.txt``) is shipped as
    itself, one line ``RECORD,ANSWER`` per public record.
    """
    return f"answers/{output}" if "{record}" in output else output


class RecordsProtocol(ProtocolSettings):
    """PhysioNet sandbox: ``setup`` once, then ``next RECORD`` per case in the entry's home.

    ``output`` and ``answers`` are templates with ``{record}``: the file ``next`` writes in its
    working folder, and the expected output shipped in the entry for each quiz record. An
    ``output`` without ``{record}`` (``answers.txt``, as in 2015-2017) is one shared file to
    which ``next`` appends a line ``RECORD,ANSWER`` per record; ``answers`` may then be one
    shared file of such lines too (the entry's ``answers.txt``), compared line by line.
    Unset, ``answers`` follows ``output`` (:func:`default_answers`); ``none`` (or null) runs
    the quiz without a comparison, each output still passing the scorer's check.
    Seconds: ``setup_s`` for the setup script, ``case_s`` for one case, ``stage_s`` for a whole
    quiz or exam.
    """

    kind: Literal["records"]
    setup: str = "setup.sh"
    next: str = "next.sh"
    output: str = "{record}.vec"
    answers: str | None = "answers/{record}.vec"
    """Set from ``output`` when the block leaves it out (:meth:`_answers_follow_output`)."""
    compare: CompareSpec = CompareSpec()
    required_files: tuple[str, ...] = ("setup.sh", "next.sh")
    executable_files: tuple[str, ...] = ("setup.sh", "next.sh")
    setup_s: float = Field(default=300.0, gt=0, strict=True)
    case_s: float = Field(default=20.0, gt=0, strict=True)
    stage_s: float = Field(default=3600.0, gt=0, strict=True)

    @model_validator(mode="before")
    @classmethod
    def _answers_follow_output(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if "answers" not in data:
            output = data.get("output", "{record}.vec")
            return {**data, "answers": default_answers(output) if isinstance(output, str) else None}
        if isinstance(data["answers"], str) and data["answers"].strip().lower() == NO_ANSWERS:
            return {**data, "answers": None}
        return data

    @field_validator("output", "answers")
    @classmethod
    def _one_file_per_record(cls, template: str | None) -> str | None:
        return None if template is None else check_record_template(template)

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


def _quiz_contract(protocol: RecordsProtocol) -> str:
    """What the quiz compares, in a participant's words."""
    if protocol.answers is None:
        return (
            "The quiz runs every public record and checks each output; it compares it with "
            "nothing, so the entry ships no answers."
        )
    answers = protocol.answers.format(record="RECORD")
    if "{record}" not in protocol.answers:
        how = "the line of each public record, compared field by field"
    else:
        tolerance = protocol.compare.tolerance
        within = f" within {tolerance:g}" if tolerance else ""
        how = (
            "one file for each public record, compared "
            + {
                "exact": "byte for byte",
                "lines": "line by line",
                "numeric": f"number by number{within}",
                "json": f"as JSON values{within}",
            }[protocol.compare.kind]
        )
    return (
        f"The quiz runs every public record and compares its output with `{answers}`, which "
        f"the entry ships ({how}). A missing or different answer stops the evaluation at the "
        "quiz; with an empty file `DRYRUN` in the entry it stops there anyway."
    )


def list_records(folder: Path) -> list[str]:
    """Record names of a PhysioNet-style folder: its ``RECORDS`` file, else every ``*.hea``."""
    listing = folder / "RECORDS"
    if listing.is_file():
        names = [line.strip() for line in listing.read_text(encoding="utf-8").splitlines()]
        return [name for name in names if name]
    return sorted(path.stem for path in folder.glob("*.hea"))


def _records_settings(settings: ProtocolSettings) -> RecordsProtocol:
    if not isinstance(settings, RecordsProtocol):
        raise TypeError(f"the records driver cannot run a {settings.kind!r} protocol")
    return settings


class RecordsDriver(Driver):
    """Runs one entry's scripts in the job's sandbox session under the challenge's limits."""

    kind = "records"
    settings_model = RecordsProtocol
    summary = "PhysioNet sandbox: setup.sh once, next.sh RECORD per case"
    case_noun = "record"

    def __init__(self, context: DriverContext) -> None:
        super().__init__(context)
        self._record_files = RecordFiles()

    @property
    def protocol(self) -> RecordsProtocol:
        """The challenge's records settings."""
        return _records_settings(self.context.settings)

    @classmethod
    def list_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """The records of ``folder`` (``RECORDS``, else every ``*.hea``)."""
        return list_records(folder)

    @classmethod
    def output_template(cls, settings: ProtocolSettings) -> str:
        """The stored output per record: the file ``next.sh`` writes, e.g. ``{record}.vec``.

        For a shared ``answers.txt`` it is the record's line, stored as ``{record}.answers.txt``.
        """
        protocol = _records_settings(settings)
        shared = protocol.appended
        return protocol.output if shared is None else f"{{record}}.{Path(shared).name}"

    @classmethod
    def entry_contract(cls, settings: ProtocolSettings) -> str:
        """The scripts, the output each record leaves and the answers the quiz compares with."""
        protocol = _records_settings(settings)
        shared = protocol.appended
        writes = (
            f"writes `{protocol.output.format(record='RECORD')}`"
            if shared is None
            else f"appends one line `RECORD,ANSWER` to `{shared}`"
        )
        required = ", ".join(f"`{name}`" for name in protocol.required_files)
        return (
            f"`{protocol.setup}` runs once, then `{protocol.next} RECORD` once per record, with "
            f"the record's files in its working folder, where it {writes}. The entry must "
            f"hold {required}. {_quiz_contract(protocol)}"
        )

    @classmethod
    def manifest(cls, settings: ProtocolSettings) -> Manifest:
        """The protocol's required and executable files."""
        protocol = _records_settings(settings)
        return Manifest(required=protocol.required_files, executable=protocol.executable_files)

    @property
    def case_s(self) -> float:
        """Seconds one ``next.sh`` run may take."""
        return self.protocol.case_s

    @property
    def stage_s(self) -> float:
        """Seconds a whole quiz or exam may take."""
        return self.protocol.stage_s

    def sandbox_limits(self, wall_s: float) -> Limits:
        """Sandbox limits of one run lasting at most ``wall_s`` seconds."""
        return run_limits(self.context.limits, self.context.parallel_runs, wall_s)

    def _env(self) -> dict[str, str]:
        own = {"PROCTOR_DATA": DATA, "HOME": HOME, "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
        return {**self.context.variables, **own}

    def _run(
        self, argv: list[str], home: Path, inputs: Path, wall_s: float, *, case: bool = False
    ) -> Outcome:
        run = self.context.session.run_case if case else self.context.session.run
        return run(
            RunSpec(
                argv,
                mounts=[
                    Mount(home, HOME, writable=True),
                    Mount(inputs, DATA),
                    *self.context.extra_mounts,
                ],
                limits=self.sandbox_limits(wall_s),
                env=self._env(),
                cwd=HOME,
            )
        )

    def prepare(self, home: Path, public_inputs: Path) -> Preparation:
        """Run the entry's setup script once, with the public inputs visible."""
        script, limit = self.protocol.setup, self.protocol.setup_s
        outcome = self._run([f"./{script}"], home, public_inputs, limit)
        if self.protocol.appended is not None:
            # the shipped answers.txt is moved aside, as PhysioNet did: the quiz starts afresh
            remove_output(home, self.protocol.appended)
        return Preparation(script, limit, outcome, launch_problem(home, script, outcome))

    def run_case(
        self, home: Path, inputs: Path, case: str, *, wall_s: float, store: Path
    ) -> CaseRun:
        """Run ``next RECORD``, take its output out of the home and store it at ``store``.

        The record's files are linked into the working folder for the run.
        """
        if self.protocol.appended is not None:
            return self._run_appending(home, inputs, case, wall_s=wall_s, store=store)
        output_name = self.protocol.output.format(record=case)
        remove_output(home, output_name)
        outcome = self._run_record(home, inputs, case, wall_s)
        if not outcome.succeeded:
            remove_output(home, output_name)
            return CaseRun(case, outcome, None, self._failure(home, outcome, wall_s))
        refused = collect_output_to(
            home, output_name, store, max_bytes=self.context.limits.output_bytes
        )
        remove_output(home, output_name)
        if refused is not None:
            return CaseRun(case, outcome, None, refused)
        problem = self.validate_output(store)
        if problem is not None:
            store.unlink()
            return CaseRun(case, outcome, None, f"{output_name}: {problem}")
        return CaseRun(case, outcome, store)

    def _run_record(self, home: Path, inputs: Path, case: str, wall_s: float) -> Outcome:
        with linked_into(home, self._record_files.of(inputs, case), DATA):
            return self._run([f"./{self.protocol.next}", case], home, inputs, wall_s, case=True)

    def _run_appending(
        self, home: Path, inputs: Path, case: str, *, wall_s: float, store: Path
    ) -> CaseRun:
        """A case whose answer is the line ``RECORD,…`` it appended to the shared file."""
        shared = self.protocol.appended or ""
        outcome = self._run_record(home, inputs, case, wall_s)
        if not outcome.succeeded:
            return CaseRun(case, outcome, None, self._failure(home, outcome, wall_s))
        collected = collect_output(home, shared, max_bytes=self.context.limits.output_bytes)
        missing = f"{shared}: {self.protocol.next} appended no line {case},ANSWER to it"
        if collected.data is None:
            absent = collected.problem.endswith("no such file")
            return CaseRun(case, outcome, None, missing if absent else collected.problem)
        line = last_line(collected.data, case)
        if line is None:
            return CaseRun(case, outcome, None, missing)
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_text(line + "\n", encoding="utf-8")
        problem = self.validate_output(store)
        if problem is not None:
            store.unlink()
            return CaseRun(case, outcome, None, f"{shared}, line of {case}: {problem}")
        return CaseRun(case, outcome, store)

    def _failure(self, home: Path, outcome: Outcome, wall_s: float) -> str:
        script = self.protocol.next
        if outcome.timed_out:
            return f"{script} timed out after {duration(wall_s)} (the limit per record)"
        return launch_problem(home, script, outcome) or f"{script} {outcome.describe()}"

    @property
    def answers_expected(self) -> bool:
        """True when the protocol names shipped answers (``answers`` template)."""
        return self.protocol.answers is not None

    def describe_answer(self, case: str) -> str:
        """The shipped answer's path for ``case``."""
        template = self.protocol.answers or ""
        return template.format(record=case)

    def expected_answer(self, entry_root: Path, case: str) -> Path | str | None:
        """The answer the entry ships for a quiz record, in the upload as unpacked."""
        if self.protocol.answers is None:
            return None
        name = self.protocol.answers.format(record=case)
        found = checked_file(entry_root, name, max_bytes=self.context.limits.output_bytes)
        return None if isinstance(found, str) and found.endswith("no such file") else found

    def compare(self, output: Path, answer: Path) -> str | None:
        """Compare under the protocol's ``compare`` rule, as streams.

        A record's line against a shipped shared ``answers.txt``: the same fields as the line
        the entry ships for that record.
        """
        if self.protocol.answers is not None and "{record}" not in self.protocol.answers:
            return compare_lines(output, answer)
        return compare_files(output, answer, self.protocol.compare)
