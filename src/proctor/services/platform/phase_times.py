"""A challenge's phases with the organizer's ``opens``/``closes`` overrides applied.

``installs.current`` applies them, so every reader of phase times (``quota.check_open``,
``choose_phase``, the overview, the boards) sees the effective ones; the bundle stays as
installed. The overrides are changed by ``phase_overrides.set_phase_times``.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

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
