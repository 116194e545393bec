"""Team invitations and the organizer's refunds, through the CLI and REST against a served app.

``proctor team invite`` / ``team join`` and ``proctor flagged`` / ``refund`` run as real
processes with ``--json`` against uvicorn on 127.0.0.1 (the refusals mostly through REST, to
keep the test fast); infrastructure failures are made by
the job store's own reaper (a lease that expired, ``max_attempts`` 1).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_seed import Seeded, seed, served, submit
from sqlalchemy import update
from toy_challenge import make_entry

from proctor.services.platform import teams
from proctor.services.platform.accounts import add_user, authenticate
from proctor.store import jobs
from proctor.store.models import Invite, SubmissionRow

PROCTOR = str(Path(sys.executable).with_name("proctor"))


@dataclass
class Cli:
    seeded: Seeded
    url: str

    def __call__(self, user: str, *args: str) -> tuple[int, Any]:
        env = dict(os.environ, PROCTOR_SERVER=self.url, PROCTOR_TOKEN=self.seeded.tokens[user])
        done = subprocess.run([PROCTOR, *args, "--json"], env=env, capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip
        return done.returncode, json.loads(done.stdout)

    def rest(self, user: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        """POST (GET without ``body``) to ``/api/v1/PATH`` as ``user``: status and JSON."""
        headers = self.seeded.headers(user)
        with httpx.Client(base_url=f"{self.url}/api/v1", headers=headers, timeout=60) as http:
            answer = http.get(path) if body is None else http.post(path, json=body)
        return answer.status_code, answer.json()


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    seeded = seed(tmp_path)
    for name in ("dan", "eve"):
        seeded.tokens[name] = add_user(seeded.platform, name).token
    with served(seeded.app) as url:
        yield Cli(seeded, url)
    seeded.platform.close()


def test_a_member_invites_and_a_teamless_user_joins_once(cli: Cli) -> None:
    status, invitation = cli("alice", "team", "invite")
    assert status == 0 and invitation["team"] == "amber" and invitation["expires"] > "2000"
    status, joined = cli("dan", "team", "join", invitation["code"])
    assert (status, joined) == (0, {"user": "dan", "team": "amber"})
    status, again = cli("eve", "team", "join", invitation["code"])
    assert status == 5 and "unknown or used" in again["error"]["message"]
    status, member = cli.rest("dan", "/teams/join", {"code": invitation["code"]})
    assert status == 400 and "already" in member["error"]["message"]
    assert cli.rest("dan", "/me")[1]["team"] == "amber"


def test_no_invitation_code_reads_as_a_command_line_option(cli: Cli) -> None:
    """A code is pasted after ``proctor team join``: one that began with "-" failed as an option."""
    principal = authenticate(cli.seeded.platform, cli.seeded.tokens["alice"])
    codes = [teams.invite(cli.seeded.platform, principal).code for _ in range(200)]
    assert all(re.fullmatch(r"[0-9a-f]{32}", code) for code in codes)


def test_only_members_and_organizers_invite_to_a_team(cli: Cli) -> None:
    status, other = cli("bob", "team", "invite", "amber")
    assert status == 5 and other["error"]["kind"] == "forbidden"
    status, unnamed = cli.rest("olga", "/teams/invites", {})
    assert status == 400 and "name the team" in unnamed["error"]["message"]
    status, named = cli.rest("olga", "/teams/invites", {"team": "amber"})
    assert status == 200 and named["team"] == "amber"
    status, joined = cli.rest("olga", "/teams/join", {"code": named["code"]})
    assert status == 400 and "organizers stay outside teams" in joined["error"]["message"]
    assert cli.rest("olga", "/teams/invites", {"team": "nope"})[0] == 404


def test_an_expired_invitation_or_a_full_team_is_refused(cli: Cli) -> None:
    _, old = cli.rest("alice", "/teams/invites", {})
    with cli.seeded.platform.db.begin() as session:
        session.execute(update(Invite).values(created=time.time() - 8 * 86400))
    status, expired = cli.rest("dan", "/teams/join", {"code": old["code"]})
    assert status == 404 and "expired" in expired["error"]["message"]
    for index in range(4):  # amber: alice and four more is the most a team may have
        name = f"member{index}"
        cli.seeded.tokens[name] = add_user(cli.seeded.platform, name).token
        code = cli.rest("alice", "/teams/invites", {})[1]["code"]
        assert cli.rest(name, "/teams/join", {"code": code})[0] == 200
    code = cli.rest("alice", "/teams/invites", {})[1]["code"]
    status, full = cli("dan", "team", "join", code)
    assert status == 4 and "already has 5 members" in full["error"]["message"]


def _lost(seeded: Seeded, entry: Path) -> str:
    """A submission of alice's whose worker was lost (the reaper fails it: infrastructure)."""
    sid = submit(seeded, "alice", entry)
    lease = jobs.claim(seeded.platform.db, "doomed-worker", 1.0)
    assert lease is not None
    assert jobs.reap(seeded.platform.db, 1, now=time.time() + 60)[0].failed
    return sid


def test_the_first_infrastructure_failure_is_refunded_and_later_ones_by_an_organizer(
    cli: Cli, tmp_path: Path
) -> None:
    entry = make_entry(tmp_path / "entry")
    first, second = _lost(cli.seeded, entry), _lost(cli.seeded, entry)
    status, listed = cli("olga", "flagged")
    assert status == 0
    assert [(f["submission"], f["refunded"]) for f in listed["flagged"]] == [
        (first, True),
        (second, False),
    ]
    assert cli.rest("alice", f"/submissions/{second}/refund", {})[0] == 404  # own team too
    assert cli.rest("bob", f"/submissions/{second}/refund", {})[0] == 404
    assert cli.rest("alice", "/flagged")[0] == 404
    status, refunded = cli("olga", "refund", second)
    assert status == 0 and refunded["refunded"] and refunded["team"] == "amber"
    status, twice = cli.rest("olga", f"/submissions/{second}/refund", {})
    assert status == 409 and "refunded already" in twice["error"]["message"]
    with cli.seeded.platform.db() as session:
        assert session.get(SubmissionRow, second).refunded  # type: ignore[union-attr]


def test_a_submission_that_was_not_flagged_is_not_refunded(cli: Cli, tmp_path: Path) -> None:
    sid = submit(cli.seeded, "alice", make_entry(tmp_path / "entry"))
    status, refused = cli("olga", "refund", sid)
    assert status == 4 and "not flagged" in refused["error"]["message"]
    assert cli.rest("olga", "/flagged") == (200, {"flagged": []})
