"""Registration routes: a person registers to a challenge; organizers decide and invite.

``/api/v1/challenges/{name}/registration`` (the caller's), and the console's
``/api/v1/challenges/{name}/registrations`` (organizers only: anyone else gets 404).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import BaseModel, Field

from proctor.services.platform import registration_admin, registrations
from proctor.services.platform.registration_answers import (
    Decision,
    Invited,
    RegistrationList,
    RegistrationStatus,
)
from proctor.web.deps import MaybePrincipalDep, PlatformDep, PrincipalDep
from proctor.web.errors import ERROR_RESPONSES
from proctor.web.routes import PUBLIC

router = APIRouter(prefix="/api/v1/challenges/{name}", responses=ERROR_RESPONSES)


class RegisterRequest(BaseModel):
    accept_terms: bool = Field(description="true: the person accepts the challenge's terms")
    terms_version: str = Field(
        default="", description="the sha256 of the terms read (the status's terms_version)"
    )


class InviteRequest(BaseModel):
    people: list[str] = Field(description="user names or emails to invite (invite mode)")


@router.get("/registration", openapi_extra=PUBLIC)
def registration_status(
    name: str, platform: PlatformDep, principal: MaybePrincipalDep
) -> RegistrationStatus:
    """The caller's registration: its state, whether they may take part and, if not, why."""
    return registrations.status(platform, principal, name)


@router.post("/registration")
def register(
    name: str, body: RegisterRequest, platform: PlatformDep, principal: PrincipalDep
) -> RegistrationStatus:
    """Register the caller, accepting the terms of ``terms_version`` (the current ones)."""
    accepted = body.terms_version if body.accept_terms else None
    return registrations.register(platform, principal, name, accepted)


@router.get("/registrations")
def registration_list(
    name: str, platform: PlatformDep, principal: PrincipalDep
) -> RegistrationList:
    """Every registration (pending first), the number pending, the people invited (organizers)."""
    return registration_admin.registrations(platform, principal, name)


CSV_CONTENT: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "One row a registrant (``registration_admin.CSV_COLUMNS``).",
        "content": {"text/csv": {"schema": {"type": "string"}}},
    }
}


@router.get("/registrations.csv", response_model=None, responses=CSV_CONTENT)
def participants_csv(name: str, platform: PlatformDep, principal: PrincipalDep) -> Response:
    """The participants as CSV: name, email, team, state, registered, terms_version, submissions."""
    text = registration_admin.participants_csv(platform, principal, name)
    return Response(
        text,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}-participants.csv"'},
    )


@router.post("/registrations/{user}/{decision}")
def decide(
    name: str,
    user: str,
    decision: str,
    platform: PlatformDep,
    principal: PrincipalDep,
) -> Decision:
    """Approve or deny (``approve`` | ``deny``) ``user``'s registration (organizers).

    ``notify`` names the person to tell.
    """
    return registration_admin.decide(platform, principal, name, user, decision)


@router.post("/invitations")
def invite(
    name: str, body: InviteRequest, platform: PlatformDep, principal: PrincipalDep
) -> Invited:
    """Invite people by user name or email to an ``invite``-mode challenge (organizers)."""
    return registration_admin.invite(platform, principal, name, body.people)
