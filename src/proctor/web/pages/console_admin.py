"""The organizer console's forms that change a challenge's phases or the accounts.

A phase's dates (``phase_overrides``), and the users and teams page (``users_admin``): add
a user (the token shown once, on the answer only), disable one, move a member, a team's
quota override. Organizers only, every form with its
CSRF token (``pages.common``, role ``organizer``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response

from proctor.errors import UsageError
from proctor.services.platform import phase_overrides, users_admin
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import NewUser
from proctor.services.platform.quota import QUOTA_LIMITS
from proctor.web.deps import PlatformDep
from proctor.web.pages.common import CsrfField, TokenCookie, act, page, render

router = APIRouter(include_in_schema=False)
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
def phase_form(  # noqa: PLR0917 - FastAPI maps parameters to the request
    name: str,
    phase: str,
    request: Request,
    platform: PlatformDep,
    opens: FormText = "",
    closes: FormText = "",
    clear: Annotated[list[str] | None, Form()] = None,
    token: TokenCookie = None,
    sent: CsrfField = "",
) -> Response:
    """Change a phase's opening or closing time (UTC), then the challenge's console again."""

    def change(me: Principal) -> None:
        phase_overrides.set_phase_times(
            platform,
            me,
            name,
            phase,
            _when(opens, "opens"),
            _when(closes, "closes"),
            tuple(c for c in clear or () if c in ("opens", "closes")),
        )

    then = f"/console/challenges/{quote(name)}"
    return act(request, platform, token, sent, change, role="organizer", then=then)


@router.get("/console/users", response_class=HTMLResponse)
def users_page(request: Request, platform: PlatformDep, token: TokenCookie = None) -> Response:
    """Every user and team; forms to add, disable, move and set a team's quota."""

    def view(me: Principal) -> tuple[str, dict[str, Any]]:
        found = users_admin.users_and_teams(platform, me)
        shown = {"users": found.users, "teams": found.teams}
        return "console/users.html", {**shown, "limits": QUOTA_LIMITS, "new_user": None}

    return page(request, platform, token, view, role="organizer")


@router.post("/console/users", response_class=HTMLResponse)
def add_user_form(  # noqa: PLR0917 - FastAPI maps parameters to the request
    request: Request,
    platform: PlatformDep,
    user: FormText,
    team: FormText = "",
    organizer: Annotated[bool, Form()] = False,
    token: TokenCookie = None,
    sent: CsrfField = "",
) -> Response:
    """Add a user; the answer shows the new token once (it is stored only as a hash)."""

    def change(me: Principal) -> NewUser:
        return users_admin.create_user(platform, me, user.strip(), team.strip() or None, organizer)

    def then(me: Principal, made: NewUser) -> Response:
        found = users_admin.users_and_teams(platform, me)
        return render(
            request,
            "console/users.html",
            me,
            users=found.users,
            teams=found.teams,
            limits=QUOTA_LIMITS,
            new_user=made,
        )

    return act(request, platform, token, sent, change, role="organizer", then=then)


@router.post("/console/users/{name}/disable", response_class=HTMLResponse)
def disable_form(
    name: str,
    request: Request,
    platform: PlatformDep,
    token: TokenCookie = None,
    sent: CsrfField = "",
) -> Response:
    """Disable a user (their tokens are refused), then the users page again."""

    def change(me: Principal) -> None:
        users_admin.disable(platform, me, name)

    return act(request, platform, token, sent, change, role="organizer", then=USERS)


@router.post("/console/teams/move", response_class=HTMLResponse)
def move_form(  # noqa: PLR0917 - FastAPI maps parameters to the request
    request: Request,
    platform: PlatformDep,
    user: FormText,
    team: FormText,
    token: TokenCookie = None,
    sent: CsrfField = "",
) -> Response:
    """Move a participant into a team, then the users page again."""

    def change(me: Principal) -> None:
        users_admin.move_member(platform, me, user.strip(), team.strip())

    return act(request, platform, token, sent, change, role="organizer", then=USERS)


@router.post("/console/teams/{team}/quota", response_class=HTMLResponse)
def quota_form(  # noqa: PLR0917 - FastAPI maps parameters to the request
    team: str,
    request: Request,
    platform: PlatformDep,
    per_day: FormText = "",
    every_days: FormText = "",
    total: FormText = "",
    concurrent: FormText = "",
    token: TokenCookie = None,
    sent: CsrfField = "",
) -> Response:
    """Set a team's quota override (empty fields: the phase's limit), then the users page."""

    def change(me: Principal) -> None:
        limits = {
            "per_day": _count(per_day, "per_day"),
            "every_days": _days(every_days),
            "total": _count(total, "total"),
            "concurrent": _count(concurrent, "concurrent"),
        }
        users_admin.set_quota(platform, me, team, limits)

    return act(request, platform, token, sent, change, role="organizer", then=USERS)


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
