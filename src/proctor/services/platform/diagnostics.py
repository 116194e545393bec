"""What an organizer reads first of a failed task: its reason, and the failing cases' output.

Both come from what a job's run artifact keeps for organizers (``cases.jsonl``'s stage and
case lines with their output tails, ``score-error.txt``, ``platform-error.txt``). The reason
names the failure, whose fault it is, the log it comes from and that log's last lines (the
last one always among them). The diagnostics are the setup output and each failed stage's
and failing case's output tails, at most ``MAX_FAILING_CASES`` cases; ``cap_words`` says what
was kept. Organizers only: callers check the principal first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from proctor.pipeline.caselog import LOG_TAIL_CHARS
from proctor.services.platform.answers import FailureReason
from proctor.types import Failure, Stage
from proctor.wording import noun

REASON_LINES = 15
"""At most this many last lines of the reason's log lead the record."""
MAX_FAILING_CASES = 20
"""At most this many failing cases' output tails are listed (the cap is said)."""
MAX_LOG_CHARS = 64 * 1024
"""Each log file keeps its last this many characters."""
REASON_LOGS = ("score-error.txt", "platform-error.txt")
"""The logs that state a failure's reason, most telling first."""
OWNERS = {
    Failure.ENTRY: "the participant's entry",
    Failure.SCORER: "the organizer's scorer (the scoring program or the references)",
    Failure.PLATFORM: "the platform (this host)",
    Failure.INFRASTRUCTURE: "the platform (its worker was lost)",
}
TAILS = ("stderr_tail", "stdout_tail")


def failed(failure: str | None, status: str | None, state: str) -> bool:
    """Whether a task failed: a failure kind, a failed result or a failed job."""
    return failure is not None or status == "failed" or state == "failed"


def owner(failure: str | None) -> str:
    """Whose fault ``failure`` is, in words."""
    try:
        return OWNERS[Failure(failure)] if failure else "not recorded"
    except ValueError:
        return "not recorded"


def anchor(task: str, name: str) -> str:
    """The id of a task's log (a file, a stage or a case) on the console's record page."""
    return "log-" + "-".join("".join(c if c.isalnum() else "_" for c in p) for p in (task, name))


def reason(
    task: str,
    failure: str | None,
    stage: str | None,
    logs: Mapping[str, str],
    lines: Sequence[Mapping[str, Any]],
) -> FailureReason:
    """A failed task's reason: its log's last ``REASON_LINES`` lines.

    The log is the scorer's or the platform's, else the failed stage's or its first failing
    case's problem and output.
    """
    source, text = "", ""
    for name in REASON_LOGS:
        if logs.get(name, "").strip():
            source, text = name, logs[name]
            break
    if not text:
        source, text, stage = _told_failure(lines, stage)
    every = text.rstrip("\n").splitlines()
    return FailureReason(
        failure=failure,
        owner=owner(failure),
        stage=stage,
        source=source or "no log was kept",
        anchor=anchor(task, source) if source else "",
        lines=every[-REASON_LINES:],
        more=len(every) > REASON_LINES,
    )


def diagnostics(lines: Sequence[Mapping[str, Any]]) -> tuple[dict[str, str], int]:
    """The setup output, failed stages' and failing cases' tails (name → text), and a count.

    The count is of every failing case; at most ``MAX_FAILING_CASES`` are listed.
    """
    found: dict[str, str] = {}
    for line in lines:
        if line.get("record") is None and (line.get("stage") == Stage.PREP or not line.get("ok")):
            found.update(_tails(line))
    failing = _failing_cases(lines)
    for line in failing[:MAX_FAILING_CASES]:
        found.update(_tails(line))
    return found, len(failing)


def cap_words(failing: int) -> str:
    """What the logs and diagnostics keep, in words (the caps said)."""
    shown = min(failing, MAX_FAILING_CASES)
    cases = f"{shown} of {failing} failing {noun(failing, 'case')} listed" + (
        f" (at most {MAX_FAILING_CASES})" if failing > MAX_FAILING_CASES else ""
    )
    return (
        f"each log keeps its last {MAX_LOG_CHARS // 1024} KiB, each run's output its last "
        f"{LOG_TAIL_CHARS:,} characters; {cases}"
    )


def _told_failure(
    lines: Sequence[Mapping[str, Any]], stage: str | None
) -> tuple[str, str, str | None]:
    """The failed stage's (else its first failing case's) log name, text and stage."""
    parts: list[str] = []
    source = ""
    stages = _failed_stages(lines)
    if stages:
        source, stage = _name(stages[0]), stage or str(stages[0].get("stage") or "") or None
        parts.append(_told(stages[0]))
    cases = [c for c in _failing_cases(lines) if stage is None or c.get("stage") == stage]
    if cases and not (stages and _output(stages[0])):
        source = _name(cases[0])
        stage = stage or str(cases[0].get("stage") or "") or None
        parts.append(_told(cases[0]))
    return source, "\n".join(p for p in parts if p), stage


def _failed_stages(lines: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [line for line in lines if line.get("record") is None and not line.get("ok")]


def _failing_cases(lines: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [line for line in lines if line.get("record") is not None and not line.get("ok")]


def _name(line: Mapping[str, Any]) -> str:
    """A stage's or a case's name among the diagnostics (``exam case te01``)."""
    record = line.get("record")
    return f"{line.get('stage')}" + (f" case {record}" if record is not None else "")


def _told(line: Mapping[str, Any]) -> str:
    """A stage's or case's problem followed by its error output (else its standard output)."""
    problem = str(line.get("problem") or "")
    return "\n".join(part.rstrip("\n") for part in (problem, _output(line)) if part)


def _output(line: Mapping[str, Any]) -> str:
    """A line's error output, else its standard output ("" when it printed nothing)."""
    return next((str(line[t]) for t in TAILS if str(line.get(t) or "").strip()), "")


def _tails(line: Mapping[str, Any]) -> dict[str, str]:
    """A line's problem and non-empty output tails, each named (``exam case te01 stderr``)."""
    name = _name(line)
    found = {f"{name} problem": str(line["problem"])} if line.get("problem") else {}
    found.update({f"{name} {t[:-5]}": str(line[t]) for t in TAILS if str(line.get(t) or "")})
    return found
