"""Walk every route of ``/openapi.json`` as each role and check what each may read.

Every route must be classified in ``ACCESS``: a route the schema lists but the table does not
fails the walk, so a new route is covered as soon as it exists. Roles: ``anonymous``,
``member`` (of the team that owns the seeded submission), ``other`` (another team's
participant) and ``organizer``.

- ``public``: anyone reads it;
- ``user``: any token (anonymous → 401);
- ``team``: the owning team and organizers (anonymous → 401, another team → 404);
- ``organizer``: organizers only (anonymous → 401, participants → 403, or 404 for another
  team's submission);
- ``console``: the organizer console, organizers only (anonymous → 401, every participant,
  the owning team's included, → 404);
- ``files``: a challenge's files, for its participants (``files.may_download``: the walk's
  challenge asks for no registration, so anyone signed in; anonymous → 404).

Whatever the status, no answer may hold a string of the role's forbidden list (another team's
report, a hidden stage's logs and case names, a hidden reference's content or path).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import httpx

ROLES = ("anonymous", "other", "member", "organizer")

ACCESS: Mapping[str, str] = {
    "GET /api/v1/me": "user",
    "GET /api/v1/challenges": "public",
    "POST /api/v1/challenges": "organizer",
    "POST /api/v1/challenges/archive": "organizer",
    "POST /api/v1/challenges/{name}/submissions": "user",
    "GET /api/v1/submissions/{sid}": "team",
    "GET /api/v1/submissions/{sid}/logs": "organizer",
    "POST /api/v1/submissions/{sid}/cancel": "team",
    "POST /api/v1/submissions/{sid}/publish": "team",
    "POST /api/v1/submissions/{sid}/final": "team",
    "POST /api/v1/submissions/{sid}/refund": "console",
    "GET /api/v1/submissions/{sid}/record": "console",
    "GET /api/v1/submissions/{sid}/entry": "console",
    "GET /api/v1/submissions/{sid}/tasks/{task}/image/{name}": "console",
    "GET /api/v1/challenges/{name}/submissions": "console",
    "PATCH /api/v1/challenges/{name}/phases/{phase}": "console",
    "GET /api/v1/users": "console",
    "POST /api/v1/users": "console",
    "POST /api/v1/users/{name}/disable": "console",
    "POST /api/v1/teams/{team}/members": "console",
    "PUT /api/v1/teams/{team}/quota": "console",
    "GET /api/v1/challenges/{name}/leaderboards/{board}": "public",
    "POST /api/v1/challenges/{name}/phases/{phase}/rescore": "console",
    "POST /api/v1/challenges/{name}/rescore": "console",
    "POST /api/v1/challenges/{name}/phases/{phase}/rescore/preview": "console",
    "POST /api/v1/challenges/{name}/rescore/preview": "console",
    "GET /api/v1/challenges/{name}/rescores/{preview}": "console",
    "POST /api/v1/challenges/{name}/rescores/{preview}/apply": "console",
    "DELETE /api/v1/challenges/{name}/rescores/{preview}": "console",
    "GET /api/v1/flagged": "console",
    "POST /api/v1/teams/invites": "user",
    "POST /api/v1/teams/join": "user",
    "POST /api/v1/teams": "user",
    "POST /api/v1/teams/leave": "user",
    "GET /api/v1/challenges/{name}/registration": "public",
    "POST /api/v1/challenges/{name}/registration": "user",
    "GET /api/v1/challenges/{name}/registrations": "console",
    "GET /api/v1/challenges/{name}/registrations.csv": "console",
    "POST /api/v1/challenges/{name}/registrations/{user}/{decision}": "console",
    "POST /api/v1/challenges/{name}/invitations": "console",
    "POST /api/v1/challenges/{name}/announcements": "console",
    "GET /api/v1/tokens": "user",
    "GET /api/v1/challenges/{name}/files": "files",
    "GET /api/v1/challenges/{name}/files/{file}": "files",
    # the walk names another user (its tokens must keep working): organizers only, then
    "POST /api/v1/tokens/revoke": "organizer",
    "POST /api/v1/tokens": "organizer",
}


@dataclass(frozen=True)
class Target:
    """What the walk fills the paths and bodies with, and what each role must never read."""

    challenge: str
    submission: str
    task: str
    forbidden: Mapping[str, Sequence[str]]


def _request(client: httpx.Client, method: str, url: str, target: Target) -> httpx.Response:
    """One call of the route with a plausible body (uploads: a file that is no archive)."""
    if method == "POST" and (url.endswith("/submissions") or url.endswith("/archive")):
        field = "bundle" if url.endswith("/archive") else "entry"
        return client.post(url, files={field: ("notes.tar.gz", io.BytesIO(b"not an archive"))})
    bodies = {
        "/publish": {"task": target.task, "published": True},
        "/challenges": {"source": "/etc"},
        "/invites": {},
        "/join": {"code": "not-a-code"},
        "/revoke": {"user": "nobody"},
        "/tokens": {"user": "nobody"},
        "/users": {"user": "walked"},
        "/members": {"user": "nobody"},
        "/invitations": {"people": ["nobody"]},
        "/announcements": {"audience": "registered", "subject": "walk", "body": "walk"},
        "/registration": {"accept_terms": True},
    }
    body = next((b for suffix, b in bodies.items() if url.endswith(suffix)), None)
    if method in ("PATCH", "PUT"):
        body = body or {}
    if method == "GET":
        return client.get(url)
    return client.request(method, url, json=body)


def _check_status(kind: str, role: str, status: int, where: str) -> None:
    assert status < 500, where
    if kind == "public":
        assert status < 400, where
    elif kind == "files":
        assert status == (404 if role == "anonymous" else 200), where
    elif role == "anonymous":
        assert status == 401, where
    elif kind == "team" and role == "other":
        assert status == 404, where
    elif kind == "team":
        assert status not in (401, 403, 404), where
    elif kind == "console" and role != "organizer":
        assert status == 404, where
    elif kind == "organizer" and role != "organizer":
        assert status in (403, 404), where
    else:
        assert status not in (401, 403), where


def walk(clients: Mapping[str, httpx.Client], target: Target) -> int:
    """Call every route of the schema as every role; the number of calls made."""
    schema = clients["anonymous"].get("/openapi.json").json()
    operations = [(m.upper(), p) for p, item in schema["paths"].items() for m in item]
    unclassified = [f"{m} {p}" for m, p in operations if f"{m} {p}" not in ACCESS]
    assert not unclassified, f"classify these routes in route_walk.ACCESS: {unclassified}"
    calls = 0
    for role in ROLES:
        client = clients[role]
        for method, path in operations:
            url = path.replace("{sid}", target.submission).replace("{name}", target.challenge)
            url = url.replace("{board}", "default").replace("{phase}", "final")
            url = url.replace("{team}", "amber").replace("{preview}", "0" * 16)
            url = url.replace("{file}", f"{target.challenge}-kit.tar.gz")
            url = url.replace("{task}", target.task)
            answer = _request(client, method, url, target)
            where = f"{role} {method} {url}: {answer.status_code} {answer.text[:300]}"
            _check_status(ACCESS[f"{method} {path}"], role, answer.status_code, where)
            leaked = [s for s in target.forbidden.get(role, ()) if s in answer.text]
            assert not leaked, f"{where} shows {leaked}"
            calls += 1
    return calls
