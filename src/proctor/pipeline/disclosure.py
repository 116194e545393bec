"""Turn what a stage saw into what the participant may see, by the stage's disclosure level."""

from __future__ import annotations

from proctor.pipeline.report import CaseCounts
from proctor.protocols.records import CaseRun

TAIL_CHARS = 4000


def counts_of(runs: tuple[CaseRun, ...], not_started: int = 0) -> CaseCounts:
    """Count passed, failed and timed-out cases (cases never started count as failed)."""
    passed = sum(1 for run in runs if run.ok)
    timed_out = sum(1 for run in runs if run.timed_out)
    failed = len(runs) - passed + not_started
    return CaseCounts(len(runs) + not_started, passed, failed, timed_out)


def counts_message(stage: str, counts: CaseCounts) -> str:
    """A message carrying nothing beyond counts, for ``counts`` disclosure."""
    return (
        f"{stage}: {counts.total} cases, {counts.passed} passed, {counts.failed} failed "
        f"({counts.timed_out} timed out)"
    )


def case_diagnostics(run: CaseRun, level: str) -> str:
    """What a participant may see of one failed case at disclosure ``level``."""
    if level == "none":
        return ""
    head = f"record {run.record}: {run.problem or 'failed'}"
    if level in {"errors", "counts"}:
        return head
    parts = [head]
    for name, text in (("stdout", run.outcome.stdout), ("stderr", run.outcome.stderr)):
        if text.strip():
            parts.append(f"--- {name} (last {TAIL_CHARS} characters) ---\n{text[-TAIL_CHARS:]}")
    return "\n".join(parts)


def script_diagnostics(script: str, problem: str, stdout: str, stderr: str, level: str) -> str:
    """What a participant may see of a failed setup script at disclosure ``level``."""
    if level == "none":
        return f"{script} failed"
    if level in {"errors", "counts"}:
        return f"{script}: {problem}"
    parts = [f"{script}: {problem}"]
    for name, text in (("stdout", stdout), ("stderr", stderr)):
        if text.strip():
            parts.append(f"--- {name} (last {TAIL_CHARS} characters) ---\n{text[-TAIL_CHARS:]}")
    return "\n".join(parts)
