"""The REST routes under ``/api/v1``: challenges, submissions, leaderboards, the caller."""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from proctor.errors import UsageError
from proctor.services.platform import (
    answers,
    installs,
    logs,
    publications,
    rescore,
    standings,
    submission_fields,
    submissions,
    tokens,
)
from proctor.web import schemas
from proctor.web.deps import MaybePrincipalDep, PlatformDep, PrincipalDep
from proctor.web.errors import ERROR_RESPONSES
from proctor.web.uploads import MinimumRate, form_body, read_upload

router = APIRouter(prefix="/api/v1", responses=ERROR_RESPONSES)
PUBLIC: dict[str, Any] = {"security": [{}, {"HTTPBearer": []}]}
"""A route whose token is optional (anonymous callers are answered too)."""


class InstallRequest(BaseModel):
    source: str = Field(description="A bundle folder on the server, or a bundled name.")


class PublishRequest(BaseModel):
    task: str
    part: str | None = Field(
        default=None, description="One part of the task (a VISCERAL organ); none: the task."
    )
    published: bool = True


@router.get("/me")
def me(platform: PlatformDep, principal: PrincipalDep) -> schemas.Me:
    """Who the token belongs to, and the token itself (expiry, last use)."""
    return schemas.Me(
        user=principal.name,
        role=principal.role,
        team=principal.team,
        token=tokens.current(platform, principal),
    )


@router.get("/challenges")
def list_challenges(platform: PlatformDep) -> schemas.ChallengeList:
    """The installed challenges (public)."""
    return schemas.ChallengeList(challenges=installs.installed_names(platform))


@router.post("/challenges")
def install_challenge(
    body: InstallRequest, platform: PlatformDep, principal: PrincipalDep
) -> answers.Installed:
    """Install or update a challenge from a folder on the server or a bundled name (organizer)."""
    return answers.Installed(**installs.install(platform, principal, body.source).to_json())


@router.post(
    "/challenges/archive",
    openapi_extra=form_body("bundle", "A .zip or .tar.gz archive of the bundle folder."),
)
async def install_archive(
    request: Request, platform: PlatformDep, principal: PrincipalDep
) -> answers.Installed:
    """Install or update a challenge from an uploaded archive of its bundle (organizer)."""
    installs.check_installer(principal)
    settings = platform.settings
    async with read_upload(
        request, "bundle", settings.upload_bytes, MinimumRate.of(settings)
    ) as upload:
        done = await run_in_threadpool(installs.install_archive, platform, principal, upload.file)
    return answers.Installed(**done.to_json())


@router.post(
    "/challenges/{name}/submissions",
    openapi_extra=form_body(
        "entry",
        "The entry: a .zip, .tar.gz or .tar archive, or the one prediction file the "
        "challenge expects (e.g. submission.csv), bare.",
        phase="The phase (default: the single open one).",
        **{"field.NAME": "The value of the challenge's submission field NAME (optional)."},
    ),
)
async def submit(
    name: str, request: Request, platform: PlatformDep, principal: PrincipalDep
) -> answers.Receipt:
    """Submit an entry to a phase (the single open one when none is named).

    The entry is an archive, or the bare prediction file a Kaggle- or EvalAI-style challenge
    expects (its name must match: ``submission.csv``); it is stored as the archive holding it.
    """
    await run_in_threadpool(submissions.check_submitter, platform, principal, name)
    settings = platform.settings
    async with read_upload(
        request, "entry", settings.upload_bytes, MinimumRate.of(settings)
    ) as upload:
        phase = upload.fields.get("phase")
        if phase is not None and not phase.strip():
            raise UsageError("phase is empty: leave it out for the single open phase")
        return await run_in_threadpool(
            partial(submissions.submit, fields=submission_fields.from_form(upload.fields)),
            platform,
            principal,
            name,
            phase,
            upload.file,
            upload.file_name,
        )


@router.get("/submissions/{sid}")
def submission_status(
    sid: str, platform: PlatformDep, principal: PrincipalDep
) -> answers.SubmissionStatus:
    """Status, stage, queue position and (when finished) the disclosed report."""
    return submissions.status(platform, principal, sid)


@router.get("/submissions/{sid}/logs")
def submission_logs(
    sid: str, platform: PlatformDep, principal: PrincipalDep
) -> answers.SubmissionLogs:
    """The organizer's logs of each task (a scoring program's reason and output): organizers."""
    return logs.submission_logs(platform, principal, sid)


@router.post("/submissions/{sid}/cancel")
def cancel(sid: str, platform: PlatformDep, principal: PrincipalDep) -> answers.SubmissionStatus:
    """Cancel a queued or running submission."""
    return submissions.cancel(platform, principal, sid)


@router.post("/submissions/{sid}/publish")
def publish(
    sid: str, body: PublishRequest, platform: PlatformDep, principal: PrincipalDep
) -> answers.Publication:
    """Publish (or, with ``published: false``, withdraw) a task's result on the boards."""
    return publications.publish(
        platform, principal, sid, body.task, part=body.part or "", published=body.published
    )


@router.post("/submissions/{sid}/final")
def final(sid: str, platform: PlatformDep, principal: PrincipalDep) -> answers.FinalChoice:
    """Choose the submission as a final entry of its team."""
    return publications.choose_final(platform, principal, sid)


BOARD_CONTENT: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The board: JSON by default, CSV with format=csv.",
        "model": answers.Leaderboard,
        "content": {"text/csv": {"schema": {"type": "string"}}},
    }
}


@router.get(
    "/challenges/{name}/leaderboards/{board}",
    openapi_extra=PUBLIC,
    response_model=None,
    responses=BOARD_CONTENT,
)
def leaderboard(
    name: str,
    board: str,
    platform: PlatformDep,
    principal: MaybePrincipalDep,
    *,
    phase: str | None = None,
    format: Literal["json", "csv"] = "json",
) -> answers.Leaderboard | Response:
    """A leaderboard of a phase (the last by default) as JSON or CSV.

    Public boards need no token; the others are for organizers (403).
    """
    if phase is not None and not phase.strip():
        raise UsageError("phase is empty: leave it out for the last phase")
    if format == "csv":
        text = standings.leaderboard_csv(platform, principal, name, phase, board)
        return Response(text, media_type="text/csv; charset=utf-8")
    return standings.leaderboard(platform, principal, name, phase, board)


@router.post("/challenges/{name}/phases/{phase}/rescore")
def rescore_phase(
    name: str, phase: str, platform: PlatformDep, principal: PrincipalDep
) -> answers.Rescored:
    """Score every scored submission of the phase again with the installed scorer (organizer).

    Answers what changed: per submission and task, each metric old → new, and rank changes
    on the default board.
    """
    return rescore.rescore(platform, principal, name, phase)


@router.post("/challenges/{name}/rescore")
def rescore_last_phase(
    name: str, platform: PlatformDep, principal: PrincipalDep
) -> answers.Rescored:
    """Rescore the challenge's last phase (organizer): as ``/phases/{phase}/rescore``."""
    return rescore.rescore(platform, principal, name, None)


@router.post("/challenges/{name}/rescore/preview")
def rescore_last_phase_preview(
    name: str, platform: PlatformDep, principal: PrincipalDep
) -> answers.Rescored:
    """Preview a rescore of the last phase (organizer): as ``/phases/{phase}/rescore/preview``."""
    return rescore.preview(platform, principal, name, None)
