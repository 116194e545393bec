"""What a participant may see of a submission while it runs and once it ended.

While it runs: once any of its jobs started a stage on hidden data, in a phase whose exam is
disclosed at ``counts`` or ``none`` (the final report hides the exam's wall time), the status
says only that the entry is being evaluated on hidden data (``running``, stage ``hidden``, no
queue position, no case count) until every job has ended, so how long the exam, the rerun or
the score stage took (or a job's return to the queue) never shows. The moment the result
appears stays visible (``docs/security.md`` bounds what it carries).

Once it ended: see ``quota.counts`` (nothing scored of a submission that does not count) and
``ladder_view`` (a Ladder phase shows the team only the Ladder's value).
"""

from __future__ import annotations

from collections.abc import Sequence

from proctor.spec import Challenge
from proctor.store.models import Job

HIDDEN_STAGE = "hidden"
"""The live stage shown for every stage on hidden data whose timing the exam's disclosure hides."""

Progress = tuple[str, str | None, int | None]
"""A submission's live state, stage and queue position."""


def live_view(
    challenge: Challenge, phase: str, jobs: Sequence[Job], progress: Progress
) -> Progress:
    """``progress`` as a participant may see it (see the module docstring)."""
    state = progress[0]
    if state not in ("queued", "running"):
        return progress
    if not any(job.hidden_started is not None for job in jobs):
        return progress
    if not challenge.disclosure_for(challenge.phase(phase)).exam_figures_hidden():
        return progress
    return "running", HIDDEN_STAGE, None
