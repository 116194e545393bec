"""When a challenge's phases take submissions: their effective times, and the refusals.

A phase's times are the bundle's, with the organizer's ``opens``/``closes`` overrides applied
(``with_overrides``); ``installs.current`` applies them, so every reader of phase times
(``check_open``, ``choose_phase``, the overview, the boards) sees the effective ones; the
bundle stays as installed. The overrides are changed by ``phase_overrides.set_phase_times``.
A submission outside its phase's window is refused (``RefusedError``) saying when it opens
or closed (``check_open``, ``no_open_phase``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from proctor.errors import RefusedError
from proctor.services.platform.resources import Platform
from proctor.spec import Challenge, Phase
from proctor.store.models import PhaseOverride


def _moment(at: float | None) -> datetime | None:
    return datetime.fromtimestamp(at, UTC) if at is not None else None


def with_overrides(platform: Platform, challenge: Challenge) -> Challenge:
    """``challenge`` with each overridden phase's times replaced (itself when none is)."""
    with platform.db() as session:
        found = {
            row.phase: row
            for row in session.scalars(
                select(PhaseOverride).where(PhaseOverride.challenge == challenge.name)
            )
        }
    if not found:
        return challenge
    phases: list[Phase] = []
    for phase in challenge.phases:
        row = found.get(phase.name)
        if row is None:
            phases.append(phase)
        else:
            times = {"opens": _moment(row.opens), "closes": _moment(row.closes)}
            phases.append(phase.model_copy(update=times))
    return challenge.model_copy(update={"phases": tuple(phases)})


def check_open(phase: Phase, now: float) -> None:
    """Refuse when ``phase`` is not open at ``now``, saying when it opens or closed."""
    moment = datetime.fromtimestamp(now, UTC)
    if phase.opens is not None and moment < phase.opens:
        raise RefusedError(
            f"phase {phase.name!r} opens at {phase.opens.isoformat()}: submit after that"
        )
    if phase.closes is not None and moment >= phase.closes:
        raise RefusedError(
            f"phase {phase.name!r} closed at {phase.closes.isoformat()}: no more submissions"
        )


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


def board_phase(challenge: Challenge, now: float) -> Phase:
    """The phase a board shows when none is named: the open one, else the last that closed.

    Of several open phases, the last in the bundle's order; with none open or closed yet,
    the one that opens first (its board is empty until then).
    """
    moment = datetime.fromtimestamp(now, UTC)
    open_phases = [p for p in challenge.phases if p.is_open(moment)]
    if open_phases:
        return open_phases[-1]
    closed = [p for p in challenge.phases if p.closes is not None and p.closes <= moment]
    if closed:
        return max(closed, key=lambda p: p.closes or moment)
    return min(challenge.phases, key=lambda p: p.opens or moment)
