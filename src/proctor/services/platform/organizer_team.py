"""The organizers' test submissions: a hidden team of their own that no public board ranks.

An organizer sees the submit form too, and wants to try the pipeline with a real entry before
participants do. An organizer in no team submits as the hidden team ``organizers`` (made on
first use, with no members): its submissions run like any other, count against that team's
quota, are visible to organizers, and are ranked only on the organizer-only ``all`` board.
"""

from __future__ import annotations

import dataclasses
import time

from sqlalchemy import select

from proctor.errors import UsageError
from proctor.services.platform.accounts import Principal
from proctor.services.platform.resources import Platform
from proctor.store.models import Team

ORGANIZER_TEAM = "organizers"
NO_TEAM = (
    "you are in no team: create one or join one with an invitation on the Team page (/team), "
    "or `proctor team create NAME`"
)


def submitter(platform: Platform, principal: Principal) -> Principal:
    """``principal`` with the team its submissions count for; refused when there is none.

    A participant submits for their team; an organizer in no team for the hidden team
    ``organizers``. A participant in no team is refused (``UsageError``).
    """
    if principal.team_id is not None and principal.team is not None:
        return principal
    if not principal.organizer:
        raise UsageError(NO_TEAM)
    team_id = _hidden_team(platform)
    return dataclasses.replace(principal, team_id=team_id, team=ORGANIZER_TEAM)


def _hidden_team(platform: Platform) -> int:
    """The id of the hidden ``organizers`` team, created on first use."""
    with platform.db.begin() as session:
        team = session.scalar(select(Team).where(Team.name == ORGANIZER_TEAM))
        if team is None:
            team = Team(name=ORGANIZER_TEAM, created=time.time(), hidden=True)
            session.add(team)
            session.flush()
        elif not team.hidden:
            raise UsageError(
                f"a participants' team is named {ORGANIZER_TEAM!r}, the name organizers' test "
                "submissions use: join a team of your own to submit (user add --team)"
            )
        return team.id
