"""The scoring-program scorer: the organizer's own program, run in the sandbox, writes the scores.

A scoring program is one more scorer kind. What it sees and where is data
(:class:`proctor.spec.scorer.ProgramMounts`); this module builds the request (argv, read-only
folders, variables, limits), hands it to a :class:`ProgramRunner` and checks what came back.
The runner is given by the layer that owns the sandbox (``pipeline.program_runs``): scorers
never touch the sandbox themselves. The request, result and runner types live in
``spec.programs``, below protocols and scorers alike, so an ingestion program (a protocol)
can be run the same way.

Inside the sandbox (default mount points, also in the variables)::

    /scoring/program     PROCTOR_PROGRAM      the program's folder (read-only, working folder)
    /scoring/reference   PROCTOR_REFERENCE    the task's hidden references (read-only)
    /scoring/outputs     PROCTOR_OUTPUTS      the entry's outputs, one file/folder per case
    /scoring/cases.txt   PROCTOR_CASES_FILE   the task's cases, one per line
    /scoring/scores      PROCTOR_SCORES_DIR   writable, size-capped: write scores.json here
                         PROCTOR_OUTPUT_TEMPLATE   a case's output name, ``{record}`` = case

Every failure (exit status, time, memory, a missing, unreadable or incomplete ``scores.json``,
a value that is not a finite number) is a :class:`ScoringProgramError`: the organizer's fault.
What the program printed has read hidden references: it goes to the organizer's log
(:attr:`TaskScores.log` / :attr:`ScoringProgramError.log`), never to the participant.
"""

from __future__ import annotations

import dataclasses
import json
import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from proctor.errors import OutputError
from proctor.scoring.base import Scorer, TaskScores
from proctor.spec.programs import SCORES_FILE, ProgramRequest, ProgramRunner
from proctor.spec.scorer import ScoringProgram

CHECK_LIMIT_S = 60.0
CHECK_MESSAGE_CHARS = 300


class ScoringProgramError(Exception):
    """The scoring program failed: ``reason`` (one line) and ``log`` (its output's tails).

    Both are for the organizer only: the program has read the hidden references.
    """

    def __init__(self, reason: str, log: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.log = log


def program_variables(spec: ScoringProgram, template: str) -> dict[str, str]:
    """The variables naming the mount points, as every run of the program gets them."""
    mounts = spec.mounts
    return {
        "PROCTOR_PROGRAM": mounts.program,
        "PROCTOR_REFERENCE": mounts.reference,
        "PROCTOR_OUTPUTS": mounts.outputs,
        "PROCTOR_CASES_FILE": mounts.cases,
        "PROCTOR_SCORES_DIR": mounts.scores,
        "PROCTOR_OUTPUT_TEMPLATE": template,
    }


def score_request(
    spec: ScoringProgram, outputs: Path, references: Path, cases: Sequence[str], template: str
) -> ProgramRequest:
    """The run that scores ``outputs`` (one file or folder per case) against ``references``."""
    mounts = spec.mounts
    return ProgramRequest(
        argv=spec.command,
        cwd=mounts.program,
        folders=(
            (spec.program, mounts.program),
            (references, mounts.reference),
            (outputs, mounts.outputs),
        ),
        env=program_variables(spec, template),
        limits=spec.limits,
        wall_s=spec.limits.wall_s,
        files={mounts.cases: "".join(f"{case}\n" for case in cases).encode()},
        scores=mounts.scores,
        scores_names=spec.scores_files,
    )


def run_scoring_program(
    spec: ScoringProgram,
    runner: ProgramRunner,
    *,
    outputs: Path,
    references: Path,
    cases: Sequence[str],
    template: str,
    request: ProgramRequest | None = None,
) -> TaskScores:
    """Run the program and read its scores; a ``ScoringProgramError`` when anything fails.

    ``request``: the run to make (default: :func:`score_request`'s). With an ingestion
    program, it runs first on the upload and the scoring program scores what it wrote
    (:func:`run_with_ingestion`).
    """
    if spec.ingestion is not None:
        return run_with_ingestion(
            spec, runner, upload=outputs, references=references, cases=cases, template=template
        )
    return _score(
        spec,
        runner,
        outputs,
        references=references,
        cases=cases,
        template=template,
        request=request,
    )


def _score(
    spec: ScoringProgram,
    runner: ProgramRunner,
    outputs: Path,
    *,
    references: Path,
    cases: Sequence[str],
    template: str,
    request: ProgramRequest | None = None,
) -> TaskScores:
    with tempfile.TemporaryDirectory(prefix="scoring-") as scratch:
        written = Path(scratch, "written")
        run = request or score_request(spec, outputs, references, cases, template)
        result = runner(dataclasses.replace(run, collect=written))
        pages = _pages(written)
    problem = result.problem()
    if problem is not None:
        raise ScoringProgramError(f"the scoring program {problem}", result.log())
    if result.scores_problem is not None:
        raise ScoringProgramError(result.scores_problem, result.log())
    if result.scores_file is None:
        names = " or ".join(spec.scores_files)
        raise ScoringProgramError(
            f"the scoring program wrote no {names} in {spec.mounts.scores}", result.log()
        )
    try:
        found = parse_scores_file(result.scores_file, result.scores_name)
        summary, per_case, warnings = read_scores(found, spec, cases)
    except ValueError as err:
        raise ScoringProgramError(f"{result.scores_name}: {err}", result.log()) from None
    notes = "".join(f"warning: {text}\n" for text in warnings)
    return TaskScores(summary, per_case, log=notes + result.log(), pages=pages)


def _pages(written: Path) -> dict[str, str]:
    """The pages the program wrote beside its scores (``detailed_results.html``)."""
    found = {}
    for name in PAGE_FILES:
        path = written / name
        if path.is_file() and not path.is_symlink():
            found[name] = path.read_text(encoding="utf-8", errors="replace")
    return found


CODE_MARKERS = ("metadata", "metadata.yaml")
PAGE_FILES = ("detailed_results.html",)
"""Pages a Codabench scoring program writes beside its scores, kept for the submission."""
INGESTION_MOUNTS = {
    "program": "/app/program",
    "input_data": "/app/input_data",
    "code": "/app/ingested_program",
    "output": "/app/output",
}


def ingestion_request(
    spec: ScoringProgram, upload: Path, empty: Path, collect: Path
) -> ProgramRequest:
    """The run of the ingestion program on ``upload``; what it writes is copied to ``collect``.

    An upload without a ``metadata`` file is first copied into its output folder, as
    Codabench's compute worker does (a result submission passes through ingestion).
    """
    ingestion = spec.ingestion
    if ingestion is None:
        raise ValueError("the scorer declares no ingestion program")
    is_code = any((upload / name).is_file() for name in CODE_MARKERS)
    return ProgramRequest(
        argv=ingestion.command,
        cwd=INGESTION_MOUNTS["program"],
        folders=(
            (ingestion.program, INGESTION_MOUNTS["program"]),
            (ingestion.input_data or empty, INGESTION_MOUNTS["input_data"]),
            (upload, INGESTION_MOUNTS["code"]),
        ),
        env={},
        limits=spec.limits,
        wall_s=ingestion.wall_s,
        scores=INGESTION_MOUNTS["output"],
        seed=None if is_code else upload,
        collect=collect,
    )


def run_with_ingestion(
    spec: ScoringProgram,
    runner: ProgramRunner,
    *,
    upload: Path,
    references: Path,
    cases: Sequence[str],
    template: str,
) -> TaskScores:
    """Ingestion (the participant's code), then scoring of what it wrote.

    As on Codabench, scoring runs after a failed ingestion too: when it writes scores the
    submission is scored (a warning in the organizer's log), otherwise the failure is the
    entry's (an ``OutputError``: the participant sees why, not what the programs printed).
    """
    with tempfile.TemporaryDirectory(prefix="ingestion-") as scratch:
        empty, collected = Path(scratch, "empty"), Path(scratch, "res")
        empty.mkdir()
        ingested = runner(ingestion_request(spec, upload, empty, collected))
        if not collected.is_dir():
            collected.mkdir()
        failed = ingested.problem()
        log = f"--- ingestion program ---\n{ingested.log()}"
        try:
            scored = _score(
                spec, runner, collected, references=references, cases=cases, template=template
            )
        except ScoringProgramError as err:
            if failed is None:
                raise ScoringProgramError(err.reason, log + err.log) from None
            raise OutputError(
                f"your code failed under the ingestion program (it {failed}) and nothing "
                "could be scored"
            ) from None
    note = f"warning: the ingestion program {failed}; scored anyway\n" if failed else ""
    return TaskScores(
        scored.summary, scored.per_record, log=note + log + scored.log, pages=scored.pages
    )


def _number(value: Any, where: str, booleans: str = "refused") -> float:
    if isinstance(value, bool) and booleans == "numbers":
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where} is {type(value).__name__}, not a number")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{where} is {value}, not a finite number")
    return number


def _json_constant(name: str) -> float:
    """NaN and Infinity parse (to be refused as not finite, naming the metric)."""
    return float(name.lower().replace("infinity", "inf"))


def parse_scores_file(data: bytes, name: str = SCORES_FILE) -> Any:
    """The document a program wrote: JSON, or ``key: value`` YAML for a ``.txt`` file.

    ``scores.txt`` is CodaLab's form (``accuracy: 0.91`` per line); it is read as YAML as
    Codabench reads it. ``ValueError`` when the bytes are not such a document.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        kind = "`key: value` lines" if name.endswith(".txt") else "a JSON document"
        raise ValueError(f"not {kind}: not UTF-8 text ({err})") from None
    if name.endswith(".txt"):
        try:
            return yaml.safe_load(text.replace("\r\n", "\n"))
        except yaml.YAMLError as err:
            raise ValueError(f"not `key: value` lines: {err}") from None
    try:
        return json.loads(text, parse_constant=_json_constant)
    except (json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"not a JSON document: {err}") from None


def _operate(operation: str, values: list[float]) -> float:
    """avg, sum, min or max of ``values``."""
    if operation == "avg":
        return sum(values) / len(values)
    if operation == "sum":
        return float(sum(values))
    return float(min(values) if operation == "min" else max(values))


def _computed(spec: ScoringProgram, summary: dict[str, float]) -> dict[str, float]:
    """The ``computed`` metrics (avg, sum, min, max of written ones)."""
    return {
        name: _operate(computed.operation, [summary[key] for key in computed.of])
        for name, computed in spec.computed.items()
    }


def read_scores(
    found: Any, spec: ScoringProgram, cases: Sequence[str]
) -> tuple[dict[str, float], dict[str, dict[str, float]], list[str]]:
    """(summary, per-case scores, warnings) from the parsed scores; ``ValueError`` if unusable.

    Every declared metric (but the ``computed`` ones, made here) must be a finite number;
    keys the YAML does not declare (and cases the task does not have) are left out with a
    warning.
    """
    if isinstance(found, bytes):
        found = parse_scores_file(found)
    if not isinstance(found, dict):
        raise ValueError(
            'must be a JSON object {"METRIC": number, ...} (scores.txt: `METRIC: number` lines)'
        )
    found = {str(key): value for key, value in found.items()}
    declared = spec.metrics
    written = [name for name in declared if name not in spec.computed]
    warnings = [
        f"{key!r} is not a metric the YAML declares: left out"
        for key in found
        if key not in declared and key != "cases"
    ]
    missing = [name for name in written if name not in found]
    if missing:
        raise ValueError(f"declared metric(s) missing: {', '.join(missing)}")
    summary = {name: _number(found[name], f"metric {name!r}", spec.booleans) for name in written}
    summary.update(_computed(spec, summary))
    summary = {name: summary[name] for name in declared}
    per_case: dict[str, dict[str, float]] = {}
    rows = found.get("cases", {})
    if not isinstance(rows, dict):
        raise ValueError('"cases" must be an object {CASE: {METRIC: number}}')
    known = set(cases)
    for case, row in rows.items():
        if case not in known:
            warnings.append(f"case {case!r} is not a case of the task: left out")
            continue
        if not isinstance(row, dict):
            raise ValueError(f"cases.{case} must be an object {{METRIC: number}}")
        per_case[case] = {
            name: _number(value, f"cases.{case}.{name}", spec.booleans)
            for name, value in row.items()
            if name in declared
        }
        warnings += [
            f"cases.{case}.{name}: not a declared metric: left out"
            for name in row
            if name not in declared
        ]
    return summary, per_case, warnings


def check_request(spec: ScoringProgram, output: Path) -> ProgramRequest:
    """The run of ``scorer.check`` on one case's output (no references: nothing hidden)."""
    if spec.check is None:
        raise ValueError("the scoring program declares no check")
    mounts = spec.mounts
    return ProgramRequest(
        argv=(*spec.check, mounts.output),
        cwd=mounts.program,
        folders=((spec.program, mounts.program), (output, mounts.output)),
        env={"PROCTOR_PROGRAM": mounts.program, "PROCTOR_OUTPUT": mounts.output},
        limits=spec.limits,
        wall_s=min(spec.limits.wall_s, CHECK_LIMIT_S),
    )


def run_output_check(spec: ScoringProgram, runner: ProgramRunner, output: Path) -> str | None:
    """None when ``scorer.check`` accepts ``output``, else its stderr's last line (capped).

    The check sees no references, so what it says may reach the participant.
    """
    result = runner(check_request(spec, output))
    if result.problem() is None:
        return None
    if result.timed_out or result.memory_exceeded or result.signal is not None:
        return f"the output check {result.problem()}"
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    message = lines[-1] if lines else f"the output check {result.problem()}"
    return message[:CHECK_MESSAGE_CHARS]


def program_scorer(
    spec: ScoringProgram, runner: ProgramRunner, check_runner: ProgramRunner | None = None
) -> Scorer:
    """The scorer of a scoring program: ``runner`` runs the program, ``check_runner`` its check.

    Without ``check`` in the YAML every stored output is usable (the program judges them).
    """

    def score(outputs: Path, references: Path, cases: Sequence[str], template: str) -> TaskScores:
        return run_scoring_program(
            spec, runner, outputs=outputs, references=references, cases=cases, template=template
        )

    checker = check_runner or runner

    def check(output: Path) -> str | None:
        if spec.check is None:
            return None
        return run_output_check(spec, checker, output)

    return Scorer(spec.declaration, score, check)
