"""The organizer console's REST routes: submissions, records, entries, phase times, users.

Organizers only: a participant gets 404 (``console.organizers_only``), no token 401.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import FileResponse, Response
from pydantic import BaseModel, Field

from proctor.services.platform import (
    answers,
    image_facts,
    phase_overrides,
    records,
    rescore,
    users_admin,
)
from proctor.services.platform.answers import NewUser, SubmissionList
from proctor.services.platform.submissions_list import Filters, challenge_submissions
from proctor.web.deps import PlatformDep, PrincipalDep
from proctor.web.downloads import attachment
from proctor.web.errors import ERROR_RESPONSES

router = APIRouter(prefix="/api/v1", responses=ERROR_RESPONSES)


class PhaseTimesRequest(BaseModel):
    opens: datetime | None = Field(default=None, description="ISO 8601 with a time zone")
    closes: datetime | None = Field(default=None, description="ISO 8601 with a time zone")
    clear: list[Literal["opens", "closes"]] = Field(
        default_factory=list, description="bounds to remove (the phase has none then)"
    )


class NewUserRequest(BaseModel):
    user: str
    team: str | None = None
    organizer: bool = False


class MoveRequest(BaseModel):
    user: str = Field(description="the participant to move into this team")


def listing_filters(
    *,
    phase: str | None = None,
    team: str | None = None,
    status: str | None = None,
    failure: str | None = None,
    page: int = Query(default=1, ge=1),
    per_page: int = Query(default=100, ge=1, le=500),
) -> Filters:
    """The list's filters and page from the query."""
    return Filters(phase, team, status, failure, page, per_page)


@router.get("/challenges/{name}/submissions")
def submissions_of(
    name: str,
    platform: PlatformDep,
    principal: PrincipalDep,
    filters: Annotated[Filters, Depends(listing_filters)],
) -> SubmissionList:
    """Every submission of the challenge, newest first, filtered and paged (organizers)."""
    return challenge_submissions(platform, principal, name, filters)


@router.get("/submissions/{sid}/record")
def submission_record(
    sid: str, platform: PlatformDep, principal: PrincipalDep
) -> answers.SubmissionRecord:
    """Everything stored of a submission, the participant's hidden diagnostics too (organizers)."""
    return records.submission_record(platform, principal, sid)


ENTRY_CONTENT: dict[int | str, dict[str, object]] = {
    200: {
        "description": "The entry archive, byte for byte as uploaded.",
        "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
    }
}


@router.get("/submissions/{sid}/entry", response_class=FileResponse, responses=ENTRY_CONTENT)
def submission_entry(sid: str, platform: PlatformDep, principal: PrincipalDep) -> FileResponse:
    """The submission's entry archive as uploaded (organizers review entries' code)."""
    path, filename = records.entry_archive(platform, principal, sid)
    return FileResponse(path, media_type="application/octet-stream", filename=filename)


IMAGE_FILE_CONTENT: dict[int | str, dict[str, object]] = {
    200: {
        "description": "The kept file: Dockerfile, build.log (text) or entry-image.json.",
        "content": {
            "text/plain": {"schema": {"type": "string"}},
            "application/json": {"schema": {"type": "object"}},
        },
    }
}


@router.get("/submissions/{sid}/tasks/{task}/image/{name}", responses=IMAGE_FILE_CONTENT)
def submission_image_file(
    sid: str, task: str, name: str, platform: PlatformDep, principal: PrincipalDep
) -> Response:
    """A kept file of the entry's own image the task ran in (organizers)."""
    return attachment(image_facts.image_file(platform, principal, sid, task, name))


@router.patch("/challenges/{name}/phases/{phase}")
def phase_times(
    name: str,
    phase: str,
    body: PhaseTimesRequest,
    platform: PlatformDep,
    principal: PrincipalDep,
) -> answers.PhaseTimes:
    """Change a phase's opening or closing time without reinstalling (organizers, audited)."""
    return phase_overrides.set_phase_times(
        platform, principal, name, phase, body.opens, body.closes, tuple(body.clear)
    )


@router.get("/users")
def users(platform: PlatformDep, principal: PrincipalDep) -> answers.UsersAndTeams:
    """Every user and team, with each team's quota override (organizers)."""
    return users_admin.users_and_teams(platform, principal)


@router.post("/users")
def add_user(body: NewUserRequest, platform: PlatformDep, principal: PrincipalDep) -> NewUser:
    """Add a user (in a team, created if missing); the API token is shown once (organizers)."""
    made = users_admin.create_user(platform, principal, body.user, body.team, body.organizer)
    return made


@router.post("/users/{name}/disable")
def disable_user(name: str, platform: PlatformDep, principal: PrincipalDep) -> answers.Disabled:
    """Disable a user: their tokens are refused from now on (organizers)."""
    return users_admin.disable(platform, principal, name)


@router.post("/teams/{team}/members")
def move_member(
    team: str, body: MoveRequest, platform: PlatformDep, principal: PrincipalDep
) -> answers.Moved:
    """Move a participant into the team, created if missing (organizers)."""
    return users_admin.move_member(platform, principal, body.user, team)


@router.put("/teams/{team}/quota")
def team_quota(
    team: str, body: answers.TeamQuotaLimits, platform: PlatformDep, principal: PrincipalDep
) -> answers.TeamQuotaAnswer:
    """Set the team's quota override; every limit null removes it (organizers)."""
    limits = body.model_dump(include={"per_day", "every_days", "total", "concurrent"})
    return users_admin.set_quota(platform, principal, team, limits)


@router.post("/challenges/{name}/phases/{phase}/rescore/preview")
def rescore_preview(
    name: str, phase: str, platform: PlatformDep, principal: PrincipalDep
) -> answers.Rescored:
    """Score the phase again and show what would change; nothing changes (organizers).

    The answer's ``preview`` is applied with ``POST /challenges/{name}/rescores/{preview}/apply``
    or dropped with ``DELETE /challenges/{name}/rescores/{preview}``; a new preview of the
    phase replaces it.
    """
    return rescore.preview(platform, principal, name, phase)


@router.get("/challenges/{name}/rescores/{preview}")
def rescore_shown(
    name: str, preview: str, platform: PlatformDep, principal: PrincipalDep
) -> answers.Rescored:
    """A rescore preview not applied yet (organizers)."""
    return rescore.shown_preview(platform, principal, name, preview)


@router.post("/challenges/{name}/rescores/{preview}/apply")
def rescore_apply(
    name: str, preview: str, platform: PlatformDep, principal: PrincipalDep
) -> answers.Rescored:
    """Store a preview's scores (organizers).

    409 when they no longer hold (a newer bundle, a job of the phase scored or scored again
    since): preview again.
    """
    return rescore.apply(platform, principal, name, preview)


@router.delete("/challenges/{name}/rescores/{preview}")
def rescore_cancel(
    name: str, preview: str, platform: PlatformDep, principal: PrincipalDep
) -> answers.RescoreCancelled:
    """Drop a rescore preview without applying it (organizers)."""
    return rescore.cancel(platform, principal, name, preview)
