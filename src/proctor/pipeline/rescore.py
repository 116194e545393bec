"""Score a job's kept outputs again with the challenge's current scorer (a rescore).

The score stage, without the stages before it: a code protocol's exam outputs (kept in the
run artifact) or a predictions upload (unpacked) are scored against the hidden references of
the challenge version given, which is how an organizer applies a fixed or updated scorer to
every scored submission of a phase without running any entry again.
"""

from __future__ import annotations

from pathlib import Path

from proctor.protocols.base import HIDDEN, FilesContext, FilesDriver
from proctor.protocols.registry import driver_for
from proctor.scoring.base import TaskScores
from proctor.scoring.registry import scorer_for
from proctor.spec.model import Challenge
from proctor.spec.programs import ProgramRunner


def rescore_task(
    challenge: Challenge, task_name: str, outputs: Path, runner: ProgramRunner | None = None
) -> TaskScores:
    """``task_name``'s scores of ``outputs`` under ``challenge``'s current scorer.

    ``outputs``: the stored exam outputs (code protocols) or the unpacked upload (a protocol
    where no code runs); ``runner`` runs a scoring program (see ``program_runs``). Raises
    ``ValueError`` for a task without hidden data, or whose scorer runs the participant's code
    (a concurrent ingestion: a rescore runs no entry again); a scorer's own exception
    propagates (the caller reports it as the scorer's failure; a ``ScoringProgramError`` has
    the organizer's log).
    """
    task = challenge.task(task_name)
    references, inputs = task.hidden_references, task.hidden_inputs
    if references is None or inputs is None:
        raise ValueError(f"task {task_name!r} has no hidden data to score")
    program = task.scoring_program
    if program is not None and program.runs_entry_code:
        raise ValueError(
            f"task {task_name!r} runs the participant's code beside its scoring program "
            "(concurrent_ingestion): scoring again would run that code again"
        )
    protocol = challenge.protocol
    driver_class = driver_for(protocol.kind)
    scorer = scorer_for(task.scorer, runner)
    cases = tuple(driver_class.list_cases(protocol, inputs))
    template = driver_class.output_template(protocol)
    if issubclass(driver_class, FilesDriver) and cases:
        driver = driver_class(FilesContext(protocol, challenge.limits, scorer.check_output))
        outputs = driver.prediction(outputs, HIDDEN, cases[0]).parent
    return scorer.score(outputs, references, cases, template)
