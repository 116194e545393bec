"""Token routes under ``/api/v1/tokens``: list and revoke, a new token for a user.

A user lists and revokes their own tokens, an organizer anyone's; only organizers issue one.
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from proctor.services.platform import answers, tokens
from proctor.web.deps import PlatformDep, PrincipalDep
from proctor.web.errors import ERROR_RESPONSES

router = APIRouter(prefix="/api/v1/tokens", responses=ERROR_RESPONSES)


class RevokeRequest(BaseModel):
    user: str | None = Field(
        default=None, description="Whose tokens (organizers: anyone's); the caller's by default."
    )


class IssueRequest(BaseModel):
    user: str = Field(description="The user the new token is for.")


@router.get("")
def list_tokens(
    platform: PlatformDep, principal: PrincipalDep, user: str | None = None
) -> answers.TokenList:
    """The user's tokens (the caller's; organizers name anyone): expiry, last use, revoked."""
    return tokens.listing(platform, principal, user)


@router.post("/revoke")
def revoke(body: RevokeRequest, platform: PlatformDep, principal: PrincipalDep) -> answers.Revoked:
    """Revoke every token of the user (the caller's own; organizers anyone's): 401 after."""
    return tokens.revoke(platform, principal, body.user)


@router.post("")
def issue(
    body: IssueRequest, platform: PlatformDep, principal: PrincipalDep
) -> answers.IssuedToken:
    """A new token for the user, shown once (organizers)."""
    return tokens.issue_for(platform, principal, body.user)
