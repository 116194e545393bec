"""The organizer console's forms that change a challenge's phases or the accounts.

A phase's dates (``phase_overrides``), and the users and teams page (``users_admin``): add
a user (the token shown once, on the answer only), disable one, move a member, a team's
quota override. Organizers only, every form with its
CSRF token (``pages.common``, role ``organizer``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response

from proctor.errors import UsageError
from proctor.services.platform import phase_overrides, users_admin
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import NewUser
from proctor.services.platform.quota import QUOTA_LIMITS
from proctor.web.deps import PlatformDep
from proctor.web.pages.common import Organizer, OrganizerForm, PageRoute, render, see_next

router = APIRouter(include_in_schema=False, route_class=PageRoute)
FormText = Annotated[str, Form()]
USERS = "/console/users"


def _when(text: str, field: str) -> datetime | None:
    """A form's date and time (``2025-03-01T12:00``, read as UTC when no zone is given)."""
    if not text.strip():
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"{field} {text!r} is not a date and time: write it as 2025-03-01T12:00"
        ) from None
    return moment if moment.utcoffset() is not None else moment.replace(tzinfo=UTC)


@router.post("/console/challenges/{name}/phases/{phase}", response_class=HTMLResponse)
def phase_form(
    name: str,
    phase: str,
    platform: PlatformDep,
    me: OrganizerForm,
    *,
    opens: FormText = "",
    closes: FormText = "",
    clear: Annotated[list[str] | None, Form()] = None,
) -> Response:
    """Change a phase's opening or closing time (UTC), then the challenge's console again."""
    phase_overrides.set_phase_times(
        platform,
        me,
        name,
        phase,
        _when(opens, "opens"),
        _when(closes, "closes"),
        tuple(c for c in clear or () if c in ("opens", "closes")),
    )
    return see_next(f"/console/challenges/{quote(name)}")


@router.get("/console/users", response_class=HTMLResponse)
def users_page(request: Request, platform: PlatformDep, me: Organizer) -> Response:
    """Every user and team; forms to add, disable, move and set a team's quota."""
    return _users(request, platform, me, None)


def _users(
    request: Request, platform: PlatformDep, me: Principal, new_user: NewUser | None
) -> Response:
    """The users page (``new_user``: the user just added, their token shown once)."""
    found = users_admin.users_and_teams(platform, me)
    return render(
        request,
        "console/users.html",
        me,
        users=found.users,
        teams=found.teams,
        limits=QUOTA_LIMITS,
        new_user=new_user,
    )


@router.post("/console/users", response_class=HTMLResponse)
def add_user_form(
    request: Request,
    platform: PlatformDep,
    me: OrganizerForm,
    user: FormText,
    *,
    team: FormText = "",
    organizer: Annotated[bool, Form()] = False,
) -> Response:
    """Add a user; the answer shows the new token once (it is stored only as a hash)."""
    made = users_admin.create_user(platform, me, user.strip(), team.strip() or None, organizer)
    return _users(request, platform, me, made)


@router.post("/console/users/{name}/disable", response_class=HTMLResponse)
def disable_form(name: str, platform: PlatformDep, me: OrganizerForm) -> Response:
    """Disable a user (their tokens are refused), then the users page again."""
    users_admin.disable(platform, me, name)
    return see_next(USERS)


@router.post("/console/teams/move", response_class=HTMLResponse)
def move_form(platform: PlatformDep, me: OrganizerForm, user: FormText, team: FormText) -> Response:
    """Move a participant into a team, then the users page again."""
    users_admin.move_member(platform, me, user.strip(), team.strip())
    return see_next(USERS)


@router.post("/console/teams/{team}/quota", response_class=HTMLResponse)
def quota_form(
    team: str,
    platform: PlatformDep,
    me: OrganizerForm,
    *,
    per_day: FormText = "",
    every_days: FormText = "",
    total: FormText = "",
    concurrent: FormText = "",
) -> Response:
    """Set a team's quota override (empty fields: the phase's limit), then the users page."""
    limits = {
        "per_day": _count(per_day, "per_day"),
        "every_days": _days(every_days),
        "total": _count(total, "total"),
        "concurrent": _count(concurrent, "concurrent"),
    }
    users_admin.set_quota(platform, me, team, limits)
    return see_next(USERS)


def _count(text: str, field: str) -> int | None:
    if not text.strip():
        return None
    if not text.strip().isdigit():
        raise UsageError(f"{field} {text!r} is not a whole number: leave it empty for the phase's")
    return int(text.strip())


def _days(text: str) -> float | None:
    if not text.strip():
        return None
    try:
        return float(text.strip())
    except ValueError:
        raise UsageError(f"every_days {text!r} is not a number of days") from None
