"""An organizer changes a phase's ``opens``/``closes`` without reinstalling the challenge.

The change is kept as an override of the bundle (``PhaseOverride``, applied by
``phase_times.with_overrides``) and written to the audit trail with the times before and
after. A time left out keeps its effective value; ``clear`` removes a bound.
"""

from __future__ import annotations

import time
from datetime import datetime

from sqlalchemy import select

from proctor.errors import NotFoundError, UsageError
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import PhaseTimes
from proctor.services.platform.console import organizers_only
from proctor.services.platform.installs import current
from proctor.services.platform.quota import iso
from proctor.services.platform.resources import Platform
from proctor.spec import Challenge, Phase
from proctor.store.models import PhaseOverride


def _stamp(value: datetime | None) -> float | None:
    if value is None:
        return None
    if value.utcoffset() is None:
        raise UsageError(
            f"{value.isoformat()} has no time zone: write it as 2025-03-01T12:00:00+00:00"
        )
    return value.timestamp()


def _shown(at: float | None) -> str | None:
    return iso(at) if at is not None else None


Bounds = tuple[float | None, float | None]
"""A phase's ``opens`` and ``closes`` (seconds since the epoch; None: no bound)."""


def set_phase_times(  # noqa: PLR0917 - the phase and its two bounds
    platform: Platform,
    principal: Principal,
    challenge_name: str,
    phase_name: str,
    opens: datetime | None = None,
    closes: datetime | None = None,
    clear: tuple[str, ...] = (),
) -> PhaseTimes:
    """Set the phase's effective times (organizers): the times it has now.

    ``clear``: bounds to remove (``"opens"``, ``"closes"``). Refused when the phase would
    close before it opens.
    """
    organizers_only(principal)
    _, challenge = current(platform, challenge_name)
    phase = _phase(challenge, phase_name)
    before = (_stamp(phase.opens), _stamp(phase.closes))
    after = _new_bounds(phase.name, before, opens, closes, clear)
    _keep(platform, principal, challenge.name, phase.name, after)
    detail = (
        f"opens {_shown(before[0])} -> {_shown(after[0])}; "
        f"closes {_shown(before[1])} -> {_shown(after[1])}"
    )
    platform.audit(principal.name, "phase.times", f"{challenge.name}/{phase.name}", detail)
    return PhaseTimes(
        challenge=challenge.name,
        phase=phase.name,
        opens=_shown(after[0]),
        closes=_shown(after[1]),
        overridden=True,
    )


def _phase(challenge: Challenge, name: str) -> Phase:
    """The challenge's phase ``name``, or "not found" listing its phases."""
    known = [p.name for p in challenge.phases]
    if name not in known:
        raise NotFoundError(
            f"no phase {name!r} in challenge {challenge.name!r} (phases: {', '.join(known)})"
        )
    return challenge.phase(name)


def _new_bounds(
    phase: str,
    before: Bounds,
    opens: datetime | None,
    closes: datetime | None,
    clear: tuple[str, ...],
) -> Bounds:
    """The bounds after the change: a time given replaces one, ``clear`` removes one."""
    new_opens = None if "opens" in clear else (_stamp(opens) if opens else before[0])
    new_closes = None if "closes" in clear else (_stamp(closes) if closes else before[1])
    if new_opens is not None and new_closes is not None and new_opens >= new_closes:
        raise UsageError(
            f"phase {phase!r} would close ({iso(new_closes)}) before it opens "
            f"({iso(new_opens)}): choose a later closing time"
        )
    return new_opens, new_closes


def _keep(
    platform: Platform, principal: Principal, challenge: str, phase: str, bounds: Bounds
) -> None:
    """Store the bounds as the phase's override (one row per challenge name and phase)."""
    with platform.db.begin() as session:
        row = session.scalar(
            select(PhaseOverride).where(
                PhaseOverride.challenge == challenge, PhaseOverride.phase == phase
            )
        )
        if row is None:
            row = PhaseOverride(challenge=challenge, phase=phase)
            session.add(row)
        row.opens, row.closes = bounds
        row.changed, row.changed_by = time.time(), principal.name
