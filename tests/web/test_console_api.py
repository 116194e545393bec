"""The organizer console through REST and the CLI, against a served app (no sandbox run).

Every console route answers an organizer, 404 to every participant (the submission's own team
included) and 401 without a token; every console command exits 5 for a participant. The
submissions here stay queued or end as infrastructure failures (the job store's reaper), so
no sandbox is needed; ``test_console_record.py`` reads a real run's diagnostics.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_seed import Seeded, archive, seed, served, submit
from sqlalchemy import select
from toy_challenge import make_entry
from typer.testing import CliRunner

from proctor.cli.main import build_app
from proctor.services.platform.accounts import add_user
from proctor.store import jobs
from proctor.store.models import AuditEvent

PROCTOR = str(Path(sys.executable).with_name("proctor"))


@dataclass
class Site:
    seeded: Seeded
    url: str

    def cli(self, user: str | None, *args: str) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, PROCTOR_SERVER=self.url)
        env.pop("PROCTOR_TOKEN", None)
        if user is not None:
            env["PROCTOR_TOKEN"] = self.seeded.tokens[user]
        return subprocess.run([PROCTOR, *args], env=env, capture_output=True, text=True,
                              timeout=60, check=False)  # fmt: skip

    def json(self, user: str, *args: str) -> tuple[int, Any]:
        done = self.cli(user, *args, "--json")
        return done.returncode, json.loads(done.stdout)

    def http(self, user: str | None) -> httpx.Client:
        headers = self.seeded.headers(user) if user else {}
        return httpx.Client(base_url=f"{self.url}/api/v1", headers=headers, timeout=60)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    seeded = seed(tmp_path / "service")
    with served(seeded.app) as url:
        yield Site(seeded, url)
    seeded.platform.close()


def _lost(seeded: Seeded, entry: Path, user: str = "alice") -> str:
    """A submission whose worker was lost: failed, ``infrastructure``, flagged."""
    sid = submit(seeded, user, entry)
    assert jobs.claim(seeded.platform.db, "doomed-worker", 1.0) is not None
    assert jobs.reap(seeded.platform.db, 1, now=time.time() + 60)[0].failed
    return sid


def _routes(sid: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    return [
        ("GET", "/challenges/toy/submissions", None),
        ("GET", f"/submissions/{sid}/record", None),
        ("GET", f"/submissions/{sid}/entry", None),
        ("GET", f"/submissions/{sid}/tasks/arousal/image/Dockerfile", None),
        ("GET", f"/submissions/{sid}/logs", None),
        ("PATCH", "/challenges/toy/phases/final", {"clear": ["closes"]}),
        ("GET", "/users", None),
        ("POST", "/users", {"user": "newcomer"}),
        ("POST", "/users/bob/disable", None),
        ("POST", "/teams/blue/members", {"user": "alice"}),
        ("PUT", "/teams/amber/quota", {"total": 3}),
        ("GET", "/flagged", None),
        ("POST", f"/submissions/{sid}/refund", None),
        ("POST", "/challenges/toy/phases/final/rescore", None),
        ("POST", "/challenges/toy/phases/final/rescore/preview", None),
        ("GET", "/challenges/toy/rescores/0123456789abcdef", None),
        ("POST", "/challenges/toy/rescores/0123456789abcdef/apply", None),
        ("DELETE", "/challenges/toy/rescores/0123456789abcdef", None),
    ]


def test_every_console_route_is_404_to_participants_and_401_without_a_token(
    site: Site, tmp_path: Path
) -> None:
    sid = submit(site.seeded, "alice", make_entry(tmp_path / "entry"))
    for user, expected in (("alice", 404), ("bob", 404), (None, 401)):
        with site.http(user) as http:
            for method, path, body in _routes(sid):
                answer = http.request(method, path, json=body)
                assert answer.status_code == expected, (user, method, path, answer.text)
                assert sid not in answer.text or path.startswith("/submissions")
    with site.http("bob") as bob:  # nothing was changed by the refused calls
        assert bob.get("/me").status_code == 200
    with site.http("olga") as olga:
        assert olga.get("/users").json()["teams"][0]["quota"] is None


def test_the_list_filters_by_phase_team_status_and_failure_and_carries_the_fields(
    site: Site, tmp_path: Path
) -> None:
    lost = _lost(site.seeded, make_entry(tmp_path / "a"))
    queued = submit(site.seeded, "bob", make_entry(tmp_path / "b"))
    with site.http("olga") as olga:
        every = olga.get("/challenges/toy/submissions").json()
        failed = olga.get("/challenges/toy/submissions", params={"status": "failed"}).json()
        infra = olga.get(
            "/challenges/toy/submissions", params={"failure": "infrastructure", "phase": "final"}
        ).json()
        blue = olga.get("/challenges/toy/submissions", params={"team": "blue"}).json()
        paged = olga.get("/challenges/toy/submissions", params={"per_page": 1, "page": 2}).json()
        wrong = olga.get("/challenges/toy/submissions", params={"status": "lost"})
    assert every["total"] == 2 and [s["submission"] for s in every["submissions"]] == [queued, lost]
    listed = every["submissions"][1]
    assert {"submission", "team", "phase", "status", "failure", "scores"} <= set(listed)
    assert (listed["team"], listed["phase"], listed["status"], listed["failure"]) == (
        "amber", "final", "failed", "infrastructure"
    )  # fmt: skip
    assert [s["submission"] for s in failed["submissions"]] == [lost]
    assert [s["submission"] for s in infra["submissions"]] == [lost]
    assert [(s["submission"], s["status"]) for s in blue["submissions"]] == [(queued, "queued")]
    assert paged["total"] == 2 and [s["submission"] for s in paged["submissions"]] == [lost]
    assert wrong.status_code == 400 and "scored" in wrong.text


def test_the_entry_is_downloaded_byte_for_byte_by_rest_and_cli(site: Site, tmp_path: Path) -> None:
    uploaded = archive(make_entry(tmp_path / "entry"))
    with site.http("alice") as alice:
        sent = alice.post("/challenges/toy/submissions", files={"entry": ("e.tgz", uploaded)})
    sid = sent.json()["submission"]
    with site.http("olga") as olga:
        answer = olga.get(f"/submissions/{sid}/entry")
    assert answer.status_code == 200 and answer.content == uploaded
    assert answer.headers["content-disposition"].endswith(f'{sid}-entry.tar.gz"')
    dest = tmp_path / "got.tar.gz"
    status, done = site.json("olga", "entry", sid, str(dest))
    assert status == 0 and done["bytes"] == len(uploaded)
    assert dest.read_bytes() == uploaded
    refused = site.cli("alice", "entry", sid, str(tmp_path / "mine.tar.gz"))
    assert refused.returncode == 5 and not (tmp_path / "mine.tar.gz").exists()


def test_a_phase_closed_early_refuses_submissions_and_is_audited(
    site: Site, tmp_path: Path
) -> None:
    past = (datetime.now(UTC) - timedelta(hours=1)).replace(microsecond=0)
    status, changed = site.json("olga", "phase", "toy", "final", "--closes", past.isoformat())
    assert status == 0 and changed["closes"] == past.isoformat()
    with site.http("alice") as alice:
        refused = alice.post(
            "/challenges/toy/submissions",
            files={"entry": ("e.tar.gz", archive(make_entry(tmp_path / "f")))},
        )
        assert refused.status_code == 409 and "no open phase" in refused.text
    with site.seeded.platform.db() as session:
        audited = session.scalars(select(AuditEvent).where(AuditEvent.action == "phase.times"))
        [event] = list(audited)
    assert event.actor == "olga" and "closes None ->" in event.detail
    status, reopened = site.json("olga", "phase", "toy", "final", "--no-closes")
    assert status == 0 and reopened["closes"] is None
    submit(site.seeded, "alice", make_entry(tmp_path / "g"))  # open again
    late = (past - timedelta(days=1)).isoformat()
    status, backwards = site.json("olga", "phase", "toy", "final", "--opens", past.isoformat(),
                                  "--closes", late)  # fmt: skip
    assert status == 2 and "before it opens" in backwards["error"]["message"]
    assert site.cli("alice", "phase", "toy", "final", "--no-closes").returncode == 5


def test_users_are_listed_added_disabled_and_moved(site: Site) -> None:
    with site.http("olga") as olga:
        made = olga.post("/users", json={"user": "carol", "team": "amber"}).json()
        assert made["user"] == "carol" and len(made["token"]) > 20
    site.seeded.tokens["carol"] = made["token"]
    with site.http("carol") as carol:
        assert carol.get("/me").json()["team"] == "amber"
    status, listed = site.json("olga", "user", "list")
    assert status == 0
    users = {u["user"]: u for u in listed["users"]}
    assert users["carol"]["team"] == "amber" and not users["carol"]["disabled"]
    assert site.cli("carol", "user", "list").returncode == 5
    status, moved = site.json("olga", "team", "move", "carol", "blue")
    assert status == 0 and moved == {"user": "carol", "team": "blue", "previous": "amber"}
    with site.http("carol") as carol:
        assert carol.get("/me").json()["team"] == "blue"
    assert site.cli("alice", "team", "move", "carol", "amber").returncode == 5
    status, _ = site.json("olga", "user", "disable", "carol")
    assert status == 0
    with site.http("carol") as carol:
        refused = carol.get("/me")
    assert refused.status_code == 401 and "disabled" in refused.text
    assert site.cli("bob", "user", "disable", "alice").returncode == 5
    with site.http("alice") as alice:
        assert alice.get("/me").status_code == 200


def test_a_teams_quota_override_applies_to_its_next_submission(site: Site, tmp_path: Path) -> None:
    submit(site.seeded, "alice", make_entry(tmp_path / "a"))
    status, set_quota = site.json("olga", "team", "quota", "amber", "--total", "1")
    assert status == 0 and set_quota["quota"]["total"] == 1
    with site.http("alice") as alice:
        refused = alice.post(
            "/challenges/toy/submissions",
            files={"entry": ("e.tar.gz", archive(make_entry(tmp_path / "b")))},
        )
    assert refused.status_code == 409 and "all 1 submissions" in refused.text
    submit(site.seeded, "bob", make_entry(tmp_path / "c"))  # another team keeps the phase's
    assert site.cli("alice", "team", "quota", "amber").returncode == 5
    status, removed = site.json("olga", "team", "quota", "amber")
    assert status == 0 and removed["quota"] is None
    submit(site.seeded, "alice", make_entry(tmp_path / "d"))


def test_the_cli_lists_submissions_as_json_csv_and_text(site: Site, tmp_path: Path) -> None:
    lost = _lost(site.seeded, make_entry(tmp_path / "a"))
    status, listed = site.json("olga", "submissions", "toy", "--status", "failed")
    assert status == 0 and [s["submission"] for s in listed["submissions"]] == [lost]
    done = site.cli("olga", "submissions", "toy", "--csv", "--failure", "infrastructure")
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert done.returncode == 0 and [(r["submission"], r["team"], r["status"]) for r in rows] == [
        (lost, "amber", "failed")
    ]
    text = site.cli("olga", "submissions", "toy")
    assert text.returncode == 0 and lost in text.stdout and "infrastructure" in text.stdout
    assert site.cli("alice", "submissions", "toy").returncode == 5
    assert site.cli(None, "submissions", "toy").returncode == 5
    status, logs = site.json("olga", "logs", lost)
    assert status == 0 and logs["tasks"][0]["state"] == "failed"
    assert site.cli("alice", "logs", lost).returncode == 5


def test_the_cli_previews_a_rescore_then_applies_or_drops_it(site: Site) -> None:
    """The command's flow, in process (the service's tests check the numbers)."""

    def rescore(user: str, *args: str) -> tuple[int, str]:
        options = ["--server", site.url, "--token", site.seeded.tokens[user]]
        done = CliRunner().invoke(build_app(), ["rescore", "toy", *args, *options])
        return done.exit_code, done.stdout

    assert "--dry-run" in CliRunner().invoke(build_app(), ["rescore", "--help"]).stdout
    status, text = rescore("olga", "--phase", "final", "--dry-run")
    assert status == 0 and "nothing changed" in text and "--apply" in text
    ident = text.rsplit("--cancel ", 1)[1].split("'")[0]
    assert rescore("alice", "--apply", ident)[0] == 5
    assert rescore("olga", "--dry-run", "--apply", ident)[0] == 2
    status, text = rescore("olga", "--apply", ident, "--json")
    assert status == 0 and json.loads(text)["applied"] is True
    assert rescore("olga", "--apply", ident)[0] == 5  # applied: no such preview now
    again = json.loads(rescore("olga", "--dry-run", "--json")[1])
    assert json.loads(rescore("olga", "--cancel", again["preview"], "--json")[1])["cancelled"]
    assert rescore("olga", "--apply", again["preview"])[0] == 5


def test_a_new_user_is_not_added_twice(site: Site) -> None:
    add_user(site.seeded.platform, "dora")
    with site.http("olga") as olga:
        again = olga.post("/users", json={"user": "dora"})
    assert again.status_code == 400 and "exists already" in again.text


CONSOLE_PAGES = ("/console", "/console/challenges/toy", "/console/flagged", "/console/install",
                 "/console/users")  # fmt: skip


def test_console_pages_are_404_to_participants_401_without_a_session_and_forms_need_csrf(
    site: Site, tmp_path: Path
) -> None:
    sid = submit(site.seeded, "alice", make_entry(tmp_path / "entry"))
    pages = (*CONSOLE_PAGES, f"/console/submissions/{sid}", f"/console/submissions/{sid}/entry")
    for user, expected in (("alice", 404), ("bob", 404), (None, 401), ("olga", 200)):
        cookies = {"proctor_token": site.seeded.tokens[user]} if user else {}
        with httpx.Client(base_url=site.url, cookies=cookies, timeout=60) as browser:
            for path in pages:
                answer = browser.get(path)
                assert answer.status_code == expected, (user, path, answer.text[:200])
                assert "<script" not in answer.text
    olga = {"proctor_token": site.seeded.tokens["olga"]}
    with httpx.Client(base_url=site.url, cookies=olga, timeout=60) as browser:
        browser.get("/console/users")  # the CSRF nonce cookie
        forged = browser.post("/console/users", data={"user": "mallory", "csrf": "forged"})
        elsewhere = browser.post(
            "/console/users/bob/disable", headers={"Origin": "https://evil.example"}
        )
    assert forged.status_code == 403 and elsewhere.status_code == 403
    listed = {u["user"]: u for u in site.json("olga", "user", "list")[1]["users"]}
    assert "mallory" not in listed and not listed["bob"]["disabled"]


def test_every_console_form_refuses_by_role_before_its_token_with_the_error_page(
    site: Site, tmp_path: Path
) -> None:
    """Nobody: 401; a participant: 404 (the console tells nothing); an organizer's forged
    form: 403. Each refusal is the HTML error page and changes nothing."""
    sid = submit(site.seeded, "alice", make_entry(tmp_path / "entry"))
    preview = "/console/challenges/toy/rescores/" + "0" * 16
    forms = (
        "/console/users",
        "/console/users/bob/disable",
        "/console/teams/move",
        "/console/teams/blue/quota",
        "/console/challenges/toy/phases/open",
        "/console/challenges/toy/rescore",
        f"/console/submissions/{sid}/refund",
        f"{preview}/apply",
        f"{preview}/cancel",
    )
    sent = {"csrf": "forged", "user": "mallory", "team": "blue", "total": "1", "closes": "x"}
    for user, expected in ((None, 401), ("alice", 404), ("bob", 404), ("olga", 403)):
        cookies = {"proctor_token": site.seeded.tokens[user]} if user else {}
        with httpx.Client(base_url=site.url, cookies=cookies, timeout=60) as browser:
            browser.get("/")  # the CSRF nonce cookie
            for path in forms:
                answer = browser.post(path, data=sent)
                assert answer.status_code == expected, (user, path, answer.text[:200])
                assert answer.headers["content-type"].startswith("text/html"), (user, path)
    listed = {u["user"]: u for u in site.json("olga", "user", "list")[1]["users"]}
    assert "mallory" not in listed and not listed["bob"]["disabled"]
    assert listed["bob"]["team"] == "blue"
