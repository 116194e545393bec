"""The participant's pages: the challenges, a challenge, its boards, submitting, a submission.

The pages call the same services as the REST routes with the same principal, so they show
exactly what the API would (a board a caller may not read is listed without a link; another
team's submission is "not found"). Pages are not part of the OpenAPI schema.
"""

from __future__ import annotations

import time
from functools import partial
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from proctor.errors import PhaseChoiceError, ProctorError
from proctor.services.platform import (
    allowances,
    answers,
    installs,
    overview,
    phase_times,
    registrations,
    standings,
    submission_fields,
    submissions,
)
from proctor.services.platform.vocabulary import default_metric
from proctor.web import csrf
from proctor.web.deps import PlatformDep
from proctor.web.pages.bundle_pages import TITLES, render_page
from proctor.web.pages.charts import board_charts, own_submissions_chart
from proctor.web.pages.common import (
    PageRoute,
    TokenCookie,
    Visitor,
    error_page,
    principal_of,
    render,
    server_url,
    signed_in,
)
from proctor.web.pages.figures import Numbers
from proctor.web.pages.navigation import challenge_nav
from proctor.web.uploads import MinimumRate, read_upload

router = APIRouter(include_in_schema=False, route_class=PageRoute)


@router.get("/", response_class=HTMLResponse)
def home(request: Request, platform: PlatformDep, principal: Visitor) -> Response:
    """The installed challenges."""
    return render(request, "home.html", principal, challenges=overview.challenge_list(platform))


@router.get("/challenges/{name}", response_class=HTMLResponse)
def challenge_page(
    name: str, request: Request, platform: PlatformDep, principal: Visitor
) -> Response:
    """A challenge: its phases, their boards, the submission form and the team's submissions."""
    shown = overview.challenge_overview(platform, principal, name)
    _, challenge = installs.current(platform, name)
    mine = submissions.listing(platform, principal, name) if principal else []
    allowed = allowances.team_allowances(platform, principal, name) if principal else []
    about = render_page(challenge, "overview") if "overview" in challenge.pages else None
    numbers = Numbers(challenge)
    metric = default_metric(challenge, phase_times.board_phase(challenge, time.time()))
    # an organizer's list holds every team's: the console is where to compare them
    team = principal is not None and not principal.organizer
    mine_chart = own_submissions_chart(mine, numbers, metric) if team else None
    return render(
        request,
        "challenge.html",
        principal,
        challenge=shown,
        nav=challenge_nav(platform, principal, challenge, "overview"),
        about=about,
        submissions=mine,
        allowances=allowed,
        registration=registrations.status(platform, principal, name),
        numbers=numbers,
        metric=metric,
        charts=[mine_chart] if mine_chart else [],
        bare_file=submissions.bare_file_names(challenge),
        fields=challenge.submission_fields,
        field_prefix=submission_fields.FORM_PREFIX,
        server=server_url(request),
    )


@router.get("/challenges/{name}/pages/{page}", response_class=HTMLResponse)
def bundle_page(
    name: str, page: str, request: Request, platform: PlatformDep, principal: Visitor
) -> Response:
    """One of the challenge's own pages (data, evaluation, terms...), sanitized."""
    _, challenge = installs.current(platform, name)
    content = render_page(challenge, page)
    return render(
        request,
        "page.html",
        principal,
        challenge=challenge,
        nav=challenge_nav(platform, principal, challenge, page),
        title=TITLES.get(page, page),
        content=content,
    )


@router.get("/challenges/{name}/leaderboards/{board}", response_class=HTMLResponse)
def board_page(
    name: str,
    board: str,
    request: Request,
    platform: PlatformDep,
    principal: Visitor,
    *,
    phase: str | None = None,
) -> Response:
    """One leaderboard as a table (the same rows as the REST board)."""
    shown = standings.leaderboard(platform, principal, name, phase or None, board)
    history = standings.board_history(platform, principal, name, phase or None, board)
    _, challenge = installs.current(platform, name)
    numbers = Numbers(challenge)
    mine = principal.team if principal else None
    return render(
        request,
        "board.html",
        principal,
        board=shown,
        columns=_columns(shown.rows),
        numbers=numbers,
        nav=challenge_nav(platform, principal, challenge, f"{shown.phase}/{shown.board}"),
        mine=mine,
        charts=board_charts(shown, history, numbers, mine),
    )


def _columns(rows: list[answers.BoardRow]) -> list[tuple[str, str]]:
    """(task, metric) pairs of the board's score columns, in first-seen order."""
    seen: dict[tuple[str, str], None] = {}
    for row in rows:
        for task, metrics in row.scores.items():
            for metric in metrics:
                seen[(task, metric)] = None
    return list(seen)


@router.post("/challenges/{name}/submit", response_class=HTMLResponse)
async def submit_page(
    name: str, request: Request, platform: PlatformDep, token: TokenCookie = None
) -> Response:
    """Take the form's entry archive and show its submission's page."""
    principal = await run_in_threadpool(principal_of, platform, token)
    try:
        csrf.check_origin(request)  # before the body is read
        member = signed_in(principal)
        await run_in_threadpool(submissions.check_submitter, platform, member, name)
        settings = platform.settings
        async with read_upload(
            request, "entry", settings.upload_bytes, MinimumRate.of(settings)
        ) as upload:
            csrf.check_form(request, upload.fields.get(csrf.FIELD))
            phase = upload.fields.get("phase") or None
            receipt = await run_in_threadpool(
                partial(submissions.submit, fields=submission_fields.from_form(upload.fields)),
                platform,
                member,
                name,
                phase,
                upload.file,
                upload.file_name,
            )
    except PhaseChoiceError as error:
        return error_page(request, principal, error, message=_phase_needed(error), back=_form(name))
    except ProctorError as error:
        return error_page(request, principal, error, back=_form(name))
    return RedirectResponse(f"/submissions/{quote(receipt.submission)}", status_code=303)


def _phase_needed(error: PhaseChoiceError) -> str:
    """The refusal in the form's words: which phases are open, and to pick one in the list."""
    names = ", ".join(error.open_phases)
    return (
        f"Several phases take submissions now ({names}): choose one in the form's phase list, "
        "then send your file again."
    )


def _form(challenge: str) -> tuple[str, str]:
    """The link back to the challenge's submit form, and its words."""
    return f"/challenges/{quote(challenge)}#submit-form", f"back to the {challenge} submit form"


__all__ = ["router"]
