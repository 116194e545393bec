"""The participant's team page: create a team, invite by link or code, join, leave.

``/team`` shows the signed-in person's team and its members, or the forms to create one
and to join with a code; an invitation is a one-use code, also shown as the link
``/teams/join/CODE`` that opens the join page. The forms call ``services.platform.teams``,
the same use cases as ``/api/v1/teams`` and ``proctor team``.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response

from proctor.services.platform import teams
from proctor.web.deps import PlatformDep
from proctor.web.pages.common import (
    Member,
    MemberForm,
    PageRoute,
    Visitor,
    render,
    see_next,
    server_url,
)

router = APIRouter(include_in_schema=False, route_class=PageRoute)


@router.get("/team", response_class=HTMLResponse)
def team_page(request: Request, platform: PlatformDep, me: Member) -> Response:
    """The person's team (members, invitations, leaving) or the forms to create or join one."""
    return render(
        request,
        "team.html",
        me,
        members=teams.members(platform, me),
        locked=teams.has_submissions(platform, me.team_id),
        invitation=None,
    )


@router.post("/team/create", response_class=HTMLResponse)
def create_form(
    platform: PlatformDep, me: MemberForm, team: Annotated[str, Form()] = ""
) -> Response:
    """Create a team with the person in it, then the team page."""
    teams.create(platform, me, team.strip())
    return see_next("/team")


@router.post("/team/invite", response_class=HTMLResponse)
def invite_form(request: Request, platform: PlatformDep, me: MemberForm) -> Response:
    """Make a one-use invitation and show it as a link and a code (shown once)."""
    made = teams.invite(platform, me)
    link = server_url(request) + f"/teams/join/{quote(made.code)}"
    return render(
        request,
        "team.html",
        me,
        members=teams.members(platform, me),
        locked=teams.has_submissions(platform, me.team_id),
        invitation=made,
        link=link,
    )


@router.post("/team/leave", response_class=HTMLResponse)
def leave_form(platform: PlatformDep, me: MemberForm) -> Response:
    """Leave the team (refused once it has a submission), then the team page."""
    teams.leave(platform, me)
    return see_next("/team")


@router.get("/teams/join/{code}", response_class=HTMLResponse)
def join_page(code: str, request: Request, platform: PlatformDep, principal: Visitor) -> Response:
    """The page an invitation link opens: the team it admits to and the button to join."""
    team = teams.invitation_team(platform, code)
    return render(request, "join.html", principal, team=team, code=code)


@router.post("/teams/join/{code}", response_class=HTMLResponse)
def join_form(code: str, platform: PlatformDep, me: MemberForm) -> Response:
    """Join the team the invitation admits to, then the team page."""
    teams.join(platform, me, code)
    return see_next("/team")


@router.post("/team/join", response_class=HTMLResponse)
def join_code_form(
    platform: PlatformDep, me: MemberForm, code: Annotated[str, Form()] = ""
) -> Response:
    """Join with a code typed in (the code of an invitation link), then the team page."""
    teams.join(platform, me, code.strip().rsplit("/", 1)[-1])
    return see_next("/team")


__all__ = ["router"]
