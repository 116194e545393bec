"""A submission's page: its status live while it runs, then its disclosed report; its forms.

While the submission is queued or running, ``/static/live.js`` polls ``/submissions/{id}/live``
(the status as ``submissions.status`` shows it to the caller: during a stage on hidden data
whose timing the exam's disclosure hides, only "evaluating on hidden data", no case count)
and reloads the page when the evaluation ends. An entry that ran in its own image shows that
image's facts to its team (``image_facts.own_images``: its own image, read before its code ran).
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from proctor.errors import ProctorError
from proctor.services.platform import (
    answers,
    image_facts,
    installs,
    publications,
    scorer_pages,
    standings,
    submissions,
)
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import size_words
from proctor.services.platform.resources import Platform
from proctor.services.platform.shown_status import HIDDEN_STAGE
from proctor.web.deps import PlatformDep
from proctor.web.errors import http_status
from proctor.web.pages.charts import dashboard_charts, submission_interval_chart
from proctor.web.pages.common import (
    MemberForm,
    PageRoute,
    TokenCookie,
    Visitor,
    principal_of,
    render,
    see_next,
    signed_in,
)
from proctor.web.pages.figures import (
    Numbers,
    case_summary,
    failure_banner,
    repeated_messages,
    score_grid,
    stage_outcome,
)
from proctor.web.pages.navigation import challenge_nav

POLL_MS = 1000
"""Milliseconds between two polls of a running submission's status."""
SHOWN_PACKAGES = 12
"""A package list of an entry's image longer than this is collapsed (with its count)."""
ENTRY_IMAGE = "entry-image"
"""The report's environment name of a task that ran in the entry's own image."""

router = APIRouter(include_in_schema=False, route_class=PageRoute)


def live_text(shown: answers.SubmissionStatus) -> dict[str, Any]:
    """The live part of a status, as the page words it: status, stage, cases, finished."""
    state = shown.status
    stage = shown.stage
    if stage == HIDDEN_STAGE:
        stage_text = "evaluating on hidden data"
    elif stage:
        stage_text = f"stage {stage}"
    elif shown.queue_position == 0:
        stage_text = "next in the queue"
    elif shown.queue_position is not None:
        stage_text = f"{shown.queue_position} ahead in the queue"
    else:
        stage_text = ""
    cases = shown.cases
    cases_text = f"{cases.done} of {cases.total} cases done" if cases else ""
    return {
        "status": state,
        "stage_text": stage_text,
        "cases_text": cases_text,
        "finished": state not in ("queued", "running"),
    }


def _default_board(
    platform: Platform, principal: Principal | None, shown: answers.SubmissionStatus
) -> answers.Leaderboard | None:
    """The phase's default board as the viewer may read it (None: not readable, or none)."""
    try:
        return standings.leaderboard(platform, principal, shown.challenge, shown.phase, "default")
    except ProctorError:
        return None


@router.get("/submissions/{sid}/live")
def live_status(sid: str, platform: PlatformDep, token: TokenCookie = None) -> Response:
    """The submission's live status as JSON, for the page's script (the cookie signs in)."""
    try:
        shown = submissions.status(platform, signed_in(principal_of(platform, token)), sid)
    except ProctorError as error:
        return JSONResponse({"detail": str(error)}, status_code=http_status(error))
    return JSONResponse(live_text(shown), headers={"Cache-Control": "no-store"})


@router.get("/submissions/{sid}", response_class=HTMLResponse)
def submission_page(
    sid: str, request: Request, platform: PlatformDep, principal: Visitor
) -> Response:
    """A submission's status, stage and queue position, then its disclosed report."""
    shown = submissions.status(platform, signed_in(principal), sid)
    sid = shown.submission  # the full id, when a prefix was given
    _, challenge = installs.current(platform, shown.challenge)
    chosen = None
    board = None
    detailed: list[str] = []
    if shown.status == "scored":
        chosen = publications.choices(platform, signed_in(principal), sid)
        board = _default_board(platform, principal, shown)
        detailed = scorer_pages.readable_tasks(platform, principal, sid)
    numbers = Numbers(challenge)
    report = shown.report or {}
    images = image_facts.own_images(platform, principal, sid) if ran_in_image(report) else None
    return render(
        request,
        "submission.html",
        principal,
        s=shown,
        live=live_text(shown),
        poll_ms=POLL_MS,
        chosen=chosen,
        numbers=numbers,
        nav=challenge_nav(platform, principal, challenge, ""),
        outcome=stage_outcome,
        case_summary=case_summary,
        score_grid=score_grid,
        detailed=detailed,
        banner=failure_banner(report, shown.failure),
        messages=repeated_messages(list(report.get("stages") or [])),
        declared_fields=challenge.submission_fields,
        images=images,
        size_words=size_words,
        shown_packages=SHOWN_PACKAGES,
        charts=[
            *dashboard_charts(shown.report, numbers),
            *filter(None, [submission_interval_chart(board, shown.report, sid, numbers)]),
        ],
    )


def ran_in_image(report: dict[str, Any]) -> bool:
    """Whether the report says a task ran in the entry's own image."""
    tasks = report.get("tasks") or {}
    shown = [report.get("environment"), *(t.get("environment") for t in tasks.values())]
    return any(isinstance(e, dict) and e.get("name") == ENTRY_IMAGE for e in shown)


@router.post("/submissions/{sid}/cancel", response_class=HTMLResponse)
def cancel_page(sid: str, platform: PlatformDep, me: MemberForm) -> Response:
    """Cancel the submission, then show its page again."""
    submissions.cancel(platform, me, sid)
    return see_next(_back(sid))


@router.post("/submissions/{sid}/publish", response_class=HTMLResponse)
def publish_page(
    sid: str,
    platform: PlatformDep,
    me: MemberForm,
    task: Annotated[str, Form()],
    *,
    part: Annotated[str, Form()] = "",
    published: Annotated[bool, Form()] = True,
) -> Response:
    """Publish or withdraw a task's (or part's) result, then show the submission again."""
    publications.publish(platform, me, sid, task, part=part, published=published)
    return see_next(_back(sid))


@router.post("/submissions/{sid}/final", response_class=HTMLResponse)
def final_page(sid: str, platform: PlatformDep, me: MemberForm) -> Response:
    """Choose the submission as a final entry of its team, then show it again."""
    publications.choose_final(platform, me, sid)
    return see_next(_back(sid))


def _back(sid: str) -> str:
    """The submission's page, to see after one of its forms."""
    return f"/submissions/{quote(sid)}"


__all__ = ["router"]
