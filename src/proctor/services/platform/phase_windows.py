"""Why a challenge takes no submission now: each phase's window, named with its times."""

from __future__ import annotations

from datetime import datetime

from proctor.spec import Challenge


def no_open_phase(challenge: Challenge, moment: datetime) -> str:
    """The refusal when no phase of ``challenge`` is open at ``moment``: when each opens or closed.

    e.g. ``challenge 'x' has no open phase now: phase 'early' closed at 2026-11-23T12:00:00+00:00;
    phase 'final' opens at 2026-11-28T12:00:00+00:00``.
    """
    states = []
    for phase in challenge.phases:
        if phase.opens is not None and moment < phase.opens:
            states.append(f"phase {phase.name!r} opens at {phase.opens.isoformat()}")
        elif phase.closes is not None:
            states.append(f"phase {phase.name!r} closed at {phase.closes.isoformat()}")
    return f"challenge {challenge.name!r} has no open phase now: {'; '.join(states)}"
