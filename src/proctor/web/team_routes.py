"""Team routes under ``/api/v1/teams``: create a team, invite to it, join one with a code, leave."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from proctor.services.platform import answers, teams
from proctor.web.deps import PlatformDep, PrincipalDep
from proctor.web.errors import ERROR_RESPONSES

router = APIRouter(prefix="/api/v1/teams", responses=ERROR_RESPONSES)


class InviteRequest(BaseModel):
    team: str | None = Field(
        default=None, description="The team (organizers); a participant's own by default."
    )


class CreateRequest(BaseModel):
    name: str = Field(description="The new team's name (1-64 letters, digits, '_', '.', '-').")


class JoinRequest(BaseModel):
    code: str = Field(description="The invitation code a member of the team was given.")


@router.post("/invites")
def invite(
    body: InviteRequest, platform: PlatformDep, principal: PrincipalDep
) -> answers.Invitation:
    """A one-use code (7 days) another user joins the team with: ``{"team", "code", "expires"}``."""
    return teams.invite(platform, principal, body.team)


@router.post("/join")
def join(body: JoinRequest, platform: PlatformDep, principal: PrincipalDep) -> answers.Joined:
    """Join the team an invitation code names: ``{"user", "team"}``."""
    return teams.join(platform, principal, body.code)


@router.post("")
def create(body: CreateRequest, platform: PlatformDep, principal: PrincipalDep) -> answers.Joined:
    """Create a team with the caller (in no team) as its member: ``{"user", "team"}``."""
    return teams.create(platform, principal, body.name)


@router.post("/leave")
def leave(platform: PlatformDep, principal: PrincipalDep) -> answers.Joined:
    """Leave the caller's team while it has no submission: ``{"user", "team"}`` (the team left)."""
    return teams.leave(platform, principal)
