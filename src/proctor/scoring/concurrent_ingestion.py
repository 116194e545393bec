"""An ingestion program run beside the scoring program (Codabench's ingestion during scoring).

With ``ingestion_only_during_scoring`` a Codabench task runs its ingestion program (which
runs the participant's code) at the same time as its scoring program, the two talking through
``/app/shared``. Here the ingestion is the scoring request's ``beside`` run: a sandbox of its
own (another slot), Codabench's ingestion layout (``spec.ingestion.LAYOUT``) with the upload
at ``/app/ingested_program`` and ``/app/input/res``, its own capped ``/app/output``
(discarded), the scoring program's shared folder at ``/app/shared``, and never the
references; with ``writable_inputs`` its inputs are writable scratch copies, as the scoring
program's (its program folder, the working folder, too). Both share the scoring program's
limits (``wall_s`` is the execution time limit).

The verdict, as on Codabench: the scores of the scoring program decide. Scores written: the
task is scored (a warning in the organizer's log when the ingestion failed). No scores: the
participant's failure when the ingestion failed on its own (exited non-zero, ran out of time
or memory) before the scoring program ended, else the organizer's; the organizer's too when the
ingestion failed setting itself up (its command missing, its own import or syntax error, all
in its folder: ``spec.program_blame``). Everything either program
printed is the organizer's: both ran beside the program that reads the references.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from proctor.errors import OutputError
from proctor.scoring.base import TaskScores
from proctor.scoring.program_scores import ScoringProgramError, judge
from proctor.spec.ingestion import LAYOUT
from proctor.spec.program_blame import organizer_fault
from proctor.spec.programs import ProgramRequest, ProgramResult
from proctor.spec.scorer import ScoringProgram

CODE_FAILED = (
    "your code failed under the ingestion program, which ran it beside the scoring program, "
    "and nothing could be scored"
)


SETUP_FAILURES = (
    "ModuleNotFoundError",
    "ImportError",
    "SyntaxError",
    "IndentationError",
    "TabError",
    "its command",
)
"""Failures of the ingestion program's own set-up, which no participant's code can cause."""


class EntryCodeError(OutputError):
    """The participant's code, run by the scorer (a concurrent ingestion), failed: no scores.

    The message is Proctor's fixed text (shown to the participant); ``log`` (both programs'
    output tails) is the organizer's.
    """

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.log = log


def beside_request(spec: ScoringProgram, upload: Path) -> ProgramRequest:
    """The concurrent ingestion's run on ``upload`` (``spec.concurrent_ingestion`` declared)."""
    ingestion = spec.concurrent_ingestion
    if ingestion is None:
        raise ValueError("the scoring program declares no concurrent ingestion")
    folders = [
        (ingestion.program, LAYOUT.program),
        (upload, LAYOUT.code),
        (upload, LAYOUT.predictions),
    ]
    if ingestion.input_data is not None:
        folders.append((ingestion.input_data, LAYOUT.input_data))
    writable = tuple(target for _, target in folders) if spec.writable_inputs else ()
    return ProgramRequest(
        argv=ingestion.command,
        cwd=LAYOUT.program,
        folders=tuple(folders),
        env={"PYTHONUNBUFFERED": "1"},
        limits=spec.limits,
        wall_s=spec.limits.wall_s,
        scores=LAYOUT.output,
        scores_names=(),
        shared=LAYOUT.shared,
        writable=writable,
    )


def judge_beside(
    spec: ScoringProgram, result: ProgramResult, cases: Sequence[str], pages: dict[str, str]
) -> TaskScores:
    """The verdict on a scoring program and the ingestion it ran beside (see the module)."""
    ingestion = result.beside
    if ingestion is None:
        raise ValueError("the run had no ingestion beside it")
    failed = None if ingestion.stopped else ingestion.problem()
    heading = "--- the ingestion program (the participant's code), run beside scoring ---\n"
    if ingestion.stopped:
        heading += "(stopped: the scoring program had ended)\n"
    log = f"{heading}{ingestion.log()}--- the scoring program ---\n"
    try:
        scored = judge(spec, result, cases, pages)
    except ScoringProgramError as err:
        if failed is None:
            raise ScoringProgramError(err.reason, log + err.log + _left(result)) from None
        reason = f"the ingestion program {failed}; the scoring program: {err.reason}"
        own = _own_failure(spec, ingestion)
        if own is not None:
            reason = f"the ingestion program failed before the participant's code ran: {own}"
            raise ScoringProgramError(reason, log + err.log + _left(result)) from None
        raise EntryCodeError(CODE_FAILED, f"failed: {reason}\n{log}{err.log}") from None
    note = f"warning: the ingestion program {failed}; scored anyway\n" if failed else ""
    return TaskScores(scored.summary, scored.per_record, log=note + log + scored.log, pages=pages)


def _own_failure(spec: ScoringProgram, ingestion: ProgramResult) -> str | None:
    """Why the ingestion's failure is its own (the organizer's), or None (the entry's).

    Only what the participant's code cannot have caused, as no read of the upload can be
    watched here: the program's own command could not start, or it failed importing or
    compiling its own modules (``spec.program_blame``).
    """
    beside = spec.concurrent_ingestion
    if beside is None or ingestion.exit_status in {None, 0} or ingestion.timed_out:
        return None
    reason = organizer_fault(
        ingestion.stderr,
        organizer=LAYOUT.program,
        participants=(LAYOUT.code, LAYOUT.predictions),
        program_folder=beside.program,
        command=beside.command[0],
    )
    if reason is None or not reason.startswith(SETUP_FAILURES):
        return None
    return reason


def _left(result: ProgramResult) -> str:
    """The organizer's note on special files left in the shared folders ('' when none)."""
    if not result.left_shared:
        return ""
    listed = "".join(f"  {entry}\n" for entry in result.left_shared)
    return (
        "--- the folders both programs share held, once both ended, entries that are not "
        "plain files or folders (a program opening a FIFO blocks; links are not followed). "
        "Either program may have made them; the ingestion runs the participant's code ---\n"
        + listed
    )
