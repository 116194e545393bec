"""A team's remaining quota in each open phase of a challenge ("2 of 5 today; next at ...")."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from proctor.services.platform.accounts import Principal
from proctor.services.platform.installs import current
from proctor.services.platform.quota import Allowance, allowance
from proctor.services.platform.resources import Platform


def team_allowances(
    platform: Platform, principal: Principal, challenge_name: str, now: float | None = None
) -> list[Allowance]:
    """The caller's team's quota in every phase open now (none for a caller without a team)."""
    if principal.team_id is None:
        return []
    at = time.time() if now is None else now
    moment = datetime.fromtimestamp(at, UTC)
    _, challenge = current(platform, challenge_name)
    with platform.db() as session:
        return [
            allowance(session, phase, principal.team_id, challenge.name, at)
            for phase in challenge.phases
            if phase.is_open(moment)
        ]
