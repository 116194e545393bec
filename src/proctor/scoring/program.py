"""The scoring-program scorer: the organizer's own program, run in the sandbox, writes the scores.

A scoring program is one more scorer kind. What it sees and where is data
(:class:`proctor.spec.scorer.ProgramMounts`); this module builds the request (argv, read-only
folders, variables, limits), hands it to a :class:`ProgramRunner` and checks what came back
(``scoring.program_scores`` reads the scores file). The runner is given by the layer that owns
the sandbox (``pipeline.program_runs``): scorers never touch the sandbox themselves. With a
``concurrent_ingestion`` (Codabench's ``ingestion_only_during_scoring``) the request has a
second program run beside it (``scoring.concurrent_ingestion``).

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
import tempfile
from collections.abc import Sequence
from pathlib import Path

from proctor.errors import ConfigError
from proctor.scoring import table
from proctor.scoring.base import CheckKind, InputCheck, Scorer, ScorerKind, TaskScores
from proctor.scoring.concurrent_ingestion import beside_request, judge_beside
from proctor.scoring.program_scores import ScoringProgramError, judge
from proctor.spec.programs import ProgramRequest, ProgramRunner
from proctor.spec.scorer import PROGRAM_SCORER, OutputCheckSettings, ScoringProgram

__all__ = [
    "KIND",
    "ScoringProgramError",
    "program_scorer",
    "run_scoring_program",
    "score_request",
]

CHECK_LIMIT_S = 60.0
CHECK_MESSAGE_CHARS = 300
PAGE_FILES = ("detailed_results.html",)
"""Pages a Codabench scoring program writes beside its scores, kept for the submission."""


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
        shared=mounts.shared,
        writable=(mounts.program, mounts.reference, mounts.outputs) if spec.writable_inputs else (),
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

    ``request``: the run to make (default: :func:`score_request`'s). With a
    ``concurrent_ingestion``, the ingestion program runs beside it on the upload
    (``outputs``), and its failure with no scores is the entry's (:class:`EntryCodeError`).
    """
    run = request or score_request(spec, outputs, references, cases, template)
    if spec.concurrent_ingestion is not None:
        run = dataclasses.replace(run, beside=beside_request(spec, outputs))
    with tempfile.TemporaryDirectory(prefix="scoring-") as scratch:
        written = Path(scratch, "written")
        result = runner(dataclasses.replace(run, collect=written))
        pages = _pages(spec, written)
    if result.beside is not None:
        return judge_beside(spec, result, cases, pages)
    return judge(spec, result, cases, pages)


def _pages(spec: ScoringProgram, written: Path) -> dict[str, str]:
    """The pages the program wrote beside its scores (``detailed_results.html``).

    With ``detailed_page: first_html``, without one the first other ``*.html`` file by name
    stands for it, as Codabench's worker takes an HTML file of a CodaLab v1.5 program (which
    names its page as it likes).
    """
    found = {}
    for name in PAGE_FILES:
        path = _plain_file(written / name)
        if path is None and spec.detailed_page == "first_html":
            path = _first_html(written)
        if path is not None:
            found[name] = path.read_text(encoding="utf-8", errors="replace")
    return found


def _plain_file(path: Path) -> Path | None:
    """``path`` when it is a regular file (not a link), else None."""
    return path if path.is_file() and not path.is_symlink() else None


def _first_html(folder: Path) -> Path | None:
    """The first regular ``*.html`` file of ``folder`` by name, or None."""
    if not folder.is_dir():
        return None
    pages = (_plain_file(path) for path in sorted(folder.glob("*.html")))
    return next((page for page in pages if page is not None), None)


def check_request(spec: ScoringProgram, output: Path) -> ProgramRequest:
    """The run of ``scorer.check`` on one case's output (no references: nothing hidden)."""
    command = spec.check_command
    if command is None:
        raise ValueError("the scoring program declares no check command")
    mounts = spec.mounts
    return ProgramRequest(
        argv=(*command, mounts.output),
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


def input_check(spec: ScoringProgram) -> InputCheck | None:
    """The checks of the program's ``check: KIND`` (``check: table``), or None (a command)."""
    if not isinstance(spec.check, OutputCheckSettings):
        return None
    for kind in CHECK_KINDS:
        if type(spec.check) is kind.settings_model:
            return kind.make(spec.check)
    raise ConfigError(f"check kind {type(spec.check).__name__} is not in the check table")


def program_scorer(
    spec: ScoringProgram, runner: ProgramRunner, check_runner: ProgramRunner | None = None
) -> Scorer:
    """The scorer of a scoring program: ``runner`` runs the program, ``check_runner`` its check.

    Without ``check`` in the YAML every stored output is usable (the program judges them).
    With a check kind (``check: table``) Proctor checks each output, then the task's outputs
    against the references, before the program runs: a refusal is the entry's failure.
    """
    checks = input_check(spec)

    def score(outputs: Path, references: Path, cases: Sequence[str], template: str) -> TaskScores:
        if checks is not None:
            checks.before_scoring(outputs, references, cases, template)
        return run_scoring_program(
            spec, runner, outputs=outputs, references=references, cases=cases, template=template
        )

    checker = check_runner or runner

    def check(output: Path) -> str | None:
        if checks is not None:
            return checks.check_output(output)
        if spec.check_command is None:
            return None
        return run_output_check(spec, checker, output)

    return Scorer(spec.declaration, score, check)


def _make(
    settings: ScoringProgram, runner: ProgramRunner | None, check_runner: ProgramRunner | None
) -> Scorer:
    if runner is None:
        raise ConfigError("a scoring program runs in the sandbox: no sandbox was given to run it")
    return program_scorer(settings, runner, check_runner)


CHECK_KINDS: tuple[CheckKind, ...] = (table.CHECK,)
"""The check kinds a scoring program may name (``check: table``), each declared by its module."""

KIND = ScorerKind(PROGRAM_SCORER, ScoringProgram, _make, "the organizer's scoring program")
"""The scoring-program kind: a ``scorer:`` mapping with program, command and metrics."""
