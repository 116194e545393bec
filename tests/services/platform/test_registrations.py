"""Registration per challenge and participants' teams, through the services and the REST API.

A challenge with ``registration:`` lets only registered (and, in ``approval`` mode,
approved) people submit; the terms' version and the time are recorded; an organizer
approves, denies and invites, every decision in the audit trail; ``team_size`` caps a team
when a member joins; a team's members may leave until it submits. A challenge without the
block keeps letting everyone signed in submit. Each test runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from registration_fixtures import registered_toy
from service_seed import Seeded, archive, seed, served
from smtp_fixtures import Mailbox, mail_settings
from sqlalchemy import select
from toy_challenge import make_entry

from proctor.errors import ForbiddenError, NotFoundError, RefusedError, UsageError
from proctor.services.platform import registration_admin, registrations, submissions, teams
from proctor.services.platform.accounts import Principal, add_user, authenticate
from proctor.services.platform.installs import current
from proctor.store.models import AuditEvent, Registration, User


@pytest.fixture
def seeded(database_url: str, tmp_path: Path) -> Iterator[Seeded]:
    """The seeded toy platform on SQLite and on PostgreSQL, with dan and eve in no team."""
    url = None if database_url.startswith("sqlite") else database_url
    found = seed(tmp_path / "service", database_url=url)
    for name in ("dan", "eve"):
        found.tokens[name] = add_user(found.platform, name).token
    yield found
    found.platform.close()


@pytest.fixture
def entry(tmp_path: Path) -> bytes:
    return archive(make_entry(tmp_path / "entry"))


def who(seeded: Seeded, user: str) -> Principal:
    return authenticate(seeded.platform, seeded.tokens[user])


def submit(seeded: Seeded, user: str, data: bytes) -> str:
    receipt = submissions.submit(seeded.platform, who(seeded, user), "toy", None, io.BytesIO(data))
    return receipt.submission


def audit_actions(seeded: Seeded) -> list[tuple[str, str, str]]:
    with seeded.platform.db() as session:
        rows = session.scalars(select(AuditEvent).order_by(AuditEvent.id)).all()
        return [(row.actor, row.action, row.detail) for row in rows]


def test_a_challenge_without_registration_lets_everyone_signed_in_submit(
    seeded: Seeded, entry: bytes
) -> None:
    shown = registrations.status(seeded.platform, who(seeded, "alice"), "toy")
    assert (shown.required, shown.may_participate, shown.reason) == (False, True, "")
    assert submit(seeded, "alice", entry)
    with pytest.raises(UsageError, match="asks for no registration"):
        registrations.register(seeded.platform, who(seeded, "alice"), "toy", None)


def test_an_unregistered_participant_cannot_submit_and_is_told_why(
    seeded: Seeded, tmp_path: Path, entry: bytes
) -> None:
    registered_toy(seeded, tmp_path / "v2", mode="open")
    with pytest.raises(ForbiddenError, match="register for this challenge"):
        submit(seeded, "alice", entry)
    with pytest.raises(ForbiddenError, match="register for this challenge"):
        submissions.check_submitter(seeded.platform, who(seeded, "alice"), "toy")
    with served(seeded.app) as url, httpx.Client(base_url=url, timeout=60) as http:
        answer = http.post(
            "/api/v1/challenges/toy/submissions",
            files={"entry": ("entry.tar.gz", io.BytesIO(entry))},
            headers=seeded.headers("alice"),
        )
        assert answer.status_code == 403
        assert "register for this challenge" in answer.json()["error"]["message"]
        status = http.get("/api/v1/challenges/toy/registration").json()
        assert status["required"] and not status["may_participate"]
        assert status["reason"].startswith("sign in")
    # an organizer's test submission needs no registration
    assert submit(seeded, "olga", entry)


def test_open_mode_records_the_terms_version_and_time_and_lets_them_submit(
    seeded: Seeded, tmp_path: Path, entry: bytes
) -> None:
    version = registered_toy(seeded, tmp_path / "v2", mode="open")
    alice = who(seeded, "alice")
    with pytest.raises(RefusedError, match="terms changed"):
        registrations.register(seeded.platform, alice, "toy", "0" * 64)
    with pytest.raises(RefusedError, match="not accepted"):
        registrations.register(seeded.platform, alice, "toy", None)
    shown = registrations.register(seeded.platform, alice, "toy", version)
    assert (shown.state, shown.may_participate) == ("approved", True)
    assert shown.accepted_terms_version == version and shown.registered is not None
    with seeded.platform.db() as session:
        row = session.scalars(select(Registration)).one()
        assert (row.challenge, row.terms_version, row.state) == ("toy", version, "approved")
        assert row.registered > 0
    assert submit(seeded, "alice", entry)
    assert ("alice", "registration.register", f"state=approved terms={version}") in (
        audit_actions(seeded)
    )
    with pytest.raises(UsageError, match="registered already"):
        registrations.register(seeded.platform, alice, "toy", version)


def test_approval_mode_waits_for_an_organizer_who_approves_or_denies(
    seeded: Seeded, tmp_path: Path, entry: bytes
) -> None:
    version = registered_toy(seeded, tmp_path / "v2", mode="approval")
    platform, olga = seeded.platform, who(seeded, "olga")
    for user in ("alice", "bob"):
        shown = registrations.register(platform, who(seeded, user), "toy", version)
        assert (shown.state, shown.may_participate) == ("pending", False)
    assert (
        "waits for an organizer"
        in registrations.status(platform, who(seeded, "alice"), "toy").reason
    )
    with pytest.raises(ForbiddenError, match="waits for an organizer's approval"):
        submit(seeded, "alice", entry)
    assert registration_admin.pending_counts(platform, olga) == {"toy": 2}
    with pytest.raises(NotFoundError):  # a participant learns nothing of the console
        registration_admin.decide(platform, who(seeded, "bob"), "toy", "alice", "approve")
    told = registration_admin.decide(platform, olga, "toy", "alice", "approve")
    assert registration_admin.pending_counts(platform, olga) == {"toy": 1}
    assert (told.state, told.notify) == ("approved", "alice")
    registration_admin.decide(platform, olga, "toy", "bob", "deny")
    assert submit(seeded, "alice", entry)
    with pytest.raises(ForbiddenError, match="declined"):
        submit(seeded, "bob", entry)
    listed = registration_admin.registrations(platform, olga, "toy")
    assert listed.pending == 0
    rows = {row.user: row for row in listed.registrations}
    assert (rows["alice"].state, rows["alice"].decided_by, rows["alice"].submissions) == (
        "approved",
        "olga",
        1,
    )
    assert rows["bob"].state == "denied"
    actions = [(actor, action) for actor, action, _ in audit_actions(seeded)]
    assert ("olga", "registration.approve") in actions and ("olga", "registration.deny") in actions


def test_the_console_home_shows_the_number_pending_and_the_api_decides(
    seeded: Seeded, tmp_path: Path
) -> None:
    version = registered_toy(seeded, tmp_path / "v2", mode="approval")
    body = {"accept_terms": True, "terms_version": version}
    with served(seeded.app) as url, httpx.Client(base_url=url, timeout=60) as http:
        answer = http.post(
            "/api/v1/challenges/toy/registration", json=body, headers=seeded.headers("dan")
        )
        assert answer.status_code == 200 and answer.json()["state"] == "pending"
        refused = http.post(
            "/api/v1/challenges/toy/registration",
            json={"accept_terms": False, "terms_version": version},
            headers=seeded.headers("eve"),
        )
        assert refused.status_code == 409 and "not accepted" in refused.text
        cookies = {"proctor_token": seeded.tokens["olga"]}
        with httpx.Client(base_url=url, cookies=cookies, timeout=60) as browser:
            assert "1 pending" in browser.get("/console").text
        listed = http.get("/api/v1/challenges/toy/registrations", headers=seeded.headers("olga"))
        assert listed.json()["pending"] == 1
        assert (
            http.get(
                "/api/v1/challenges/toy/registrations", headers=seeded.headers("bob")
            ).status_code
            == 404
        )
        done = http.post(
            "/api/v1/challenges/toy/registrations/dan/approve", headers=seeded.headers("olga")
        )
        assert done.json() == {
            "challenge": "toy",
            "user": "dan",
            "state": "approved",
            "notify": "dan",
        }
        mine = http.get("/api/v1/challenges/toy/registration", headers=seeded.headers("dan")).json()
        assert mine["may_participate"] and mine["accepted_terms_version"] == version


def test_invite_mode_admits_only_the_people_an_organizer_invited(
    seeded: Seeded, tmp_path: Path
) -> None:
    version = registered_toy(seeded, tmp_path / "v2", mode="invite")
    platform, olga = seeded.platform, who(seeded, "olga")
    shown = registrations.status(platform, who(seeded, "alice"), "toy")
    assert not shown.invited and "by invitation" in shown.reason
    with pytest.raises(ForbiddenError, match="by invitation"):
        registrations.register(platform, who(seeded, "alice"), "toy", version)
    assert registration_admin.invite(platform, olga, "toy", ["alice", " ", "alice"]).invited == [
        "alice"
    ]
    with pytest.raises(UsageError, match="neither a user name nor an email"):
        registration_admin.invite(platform, olga, "toy", ["a b@c"])
    emailed = registration_admin.invite(platform, olga, "toy", ["Zoe@Example.org"]).invited
    assert emailed == ["alice", "zoe@example.org"]
    assert registrations.register(platform, who(seeded, "alice"), "toy", version).may_participate
    with pytest.raises(ForbiddenError, match="by invitation"):
        registrations.register(platform, who(seeded, "bob"), "toy", version)
    assert ("olga", "registration.invite", "alice") in audit_actions(seeded)


def test_the_participants_csv_lists_each_registrant(
    seeded: Seeded, tmp_path: Path, entry: bytes
) -> None:
    version = registered_toy(seeded, tmp_path / "v2", mode="open")
    registrations.register(seeded.platform, who(seeded, "alice"), "toy", version)
    submit(seeded, "alice", entry)
    text = registration_admin.participants_csv(seeded.platform, who(seeded, "olga"), "toy")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == list(registration_admin.CSV_COLUMNS)
    assert len(rows) == 1
    row = rows[0]
    assert (row["name"], row["email"], row["team"], row["state"]) == (
        "alice",
        "",
        "amber",
        "approved",
    )
    assert (row["terms_version"], row["submissions"]) == (version, "1")
    assert row["registered"].endswith("+00:00")
    with pytest.raises(NotFoundError):
        registration_admin.participants_csv(seeded.platform, who(seeded, "alice"), "toy")


def test_a_participant_creates_a_team_invites_and_a_second_person_joins(seeded: Seeded) -> None:
    platform = seeded.platform
    assert teams.create(platform, who(seeded, "dan"), "dragons").team == "dragons"
    with pytest.raises(UsageError, match="already"):
        teams.create(platform, who(seeded, "dan"), "other")
    with pytest.raises(UsageError, match="exists already"):
        teams.create(platform, who(seeded, "eve"), "dragons")
    with pytest.raises(UsageError, match="not allowed"):
        teams.create(platform, who(seeded, "eve"), "no spaces")
    with pytest.raises(UsageError, match="organizers' test team"):
        teams.create(platform, who(seeded, "eve"), "organizers")
    code = teams.invite(platform, who(seeded, "dan")).code
    assert teams.invitation_team(platform, code) == "dragons"
    assert teams.join(platform, who(seeded, "eve"), code).team == "dragons"
    assert teams.members(platform, who(seeded, "eve")) == ["dan", "eve"]
    with pytest.raises(NotFoundError, match="used"):
        teams.invitation_team(platform, code)


def test_team_size_is_enforced_when_a_member_joins_and_when_a_team_registers(
    seeded: Seeded, tmp_path: Path
) -> None:
    version = registered_toy(seeded, tmp_path / "v2", mode="open", team_size=1)
    platform = seeded.platform
    teams.create(platform, who(seeded, "dan"), "dragons")
    registrations.register(platform, who(seeded, "dan"), "toy", version)
    code = teams.invite(platform, who(seeded, "dan")).code
    with pytest.raises(RefusedError, match="already has 1 members"):
        teams.join(platform, who(seeded, "eve"), code)
    # the joiner's registrations count too: eve, registered, cannot join gus's team of one
    registrations.register(platform, who(seeded, "eve"), "toy", version)
    seeded.tokens["gus"] = add_user(platform, "gus", team="gophers").token
    with pytest.raises(RefusedError, match="already has 1 members"):
        teams.join(platform, who(seeded, "eve"), teams.invite(platform, who(seeded, "gus")).code)
    # a team larger than the challenge allows cannot register
    add_user(platform, "fay", team="amber")
    alice = who(seeded, "alice")
    with pytest.raises(RefusedError, match="allows teams of 1 at most"):
        registrations.register(platform, alice, "toy", version)


def test_members_leave_until_the_team_submits_and_the_last_removes_it(
    seeded: Seeded, entry: bytes
) -> None:
    platform = seeded.platform
    teams.create(platform, who(seeded, "dan"), "dragons")
    teams.join(platform, who(seeded, "eve"), teams.invite(platform, who(seeded, "dan")).code)
    assert teams.leave(platform, who(seeded, "eve")).team == "dragons"
    assert who(seeded, "eve").team is None
    teams.leave(platform, who(seeded, "dan"))
    teams.create(platform, who(seeded, "eve"), "dragons")  # the name is free again
    submit(seeded, "alice", entry)
    with pytest.raises(RefusedError, match="has submissions"):
        teams.leave(platform, who(seeded, "alice"))
    with pytest.raises(UsageError, match="in no team"):
        teams.leave(platform, who(seeded, "dan"))


def test_the_team_routes_create_and_leave(seeded: Seeded) -> None:
    with served(seeded.app) as url, httpx.Client(base_url=url, timeout=60) as http:
        made = http.post("/api/v1/teams", json={"name": "dragons"}, headers=seeded.headers("dan"))
        assert made.json() == {"user": "dan", "team": "dragons"}
        left = http.post("/api/v1/teams/leave", headers=seeded.headers("dan"))
        assert left.json() == {"user": "dan", "team": "dragons"}
        again = http.post("/api/v1/teams/leave", headers=seeded.headers("dan"))
        assert again.status_code == 400


def test_a_decision_on_an_unknown_registration_is_not_found(seeded: Seeded, tmp_path: Path) -> None:
    registered_toy(seeded, tmp_path / "v2", mode="approval")
    olga = who(seeded, "olga")
    with pytest.raises(NotFoundError, match="has not registered"):
        registration_admin.decide(seeded.platform, olga, "toy", "alice", "approve")
    with pytest.raises(UsageError, match="choose approve or deny"):
        registration_admin.decide(seeded.platform, olga, "toy", "alice", "maybe")
    assert current(seeded.platform, "toy")[1].registration is not None


def test_the_new_forms_need_the_pages_token(seeded: Seeded, tmp_path: Path) -> None:
    """Register, create a team and approve, posted without the page's token or from another
    site, are refused (403) and change nothing; with it they go through."""
    version = registered_toy(seeded, tmp_path / "v2", mode="approval")
    field = re.compile(r'name="csrf" value="([^"]+)"')
    with served(seeded.app) as url:
        dan = httpx.Client(base_url=url, timeout=60)
        olga = httpx.Client(base_url=url, timeout=60)
        for browser, user in ((dan, "dan"), (olga, "olga")):
            form = field.search(browser.get("/login").text)
            assert form is not None
            browser.post("/login", data={"token": seeded.tokens[user], "csrf": form.group(1)})
        register = {"accept": "yes", "terms_version": version}
        forms = [
            (dan, "/challenges/toy/register", register),
            (dan, "/team/create", {"team": "dragons"}),
            (olga, "/console/challenges/toy/registrations/dan/approve", {}),
        ]
        for browser, path, fields in forms:
            good = field.search(browser.get("/team").text)
            assert good is not None
            attempts = [
                browser.post(path, data=fields),
                browser.post(path, data={**fields, "csrf": "0" * 64}),
                browser.post(
                    path,
                    data={**fields, "csrf": good.group(1)},
                    headers={"Origin": "http://evil.example"},
                ),
            ]
            assert [a.status_code for a in attempts] == [403] * 3, path
        assert who(seeded, "dan").team is None
        assert registrations.status(seeded.platform, who(seeded, "dan"), "toy").state == "none"
        for browser, path, fields in forms:
            good = field.search(browser.get("/team").text)
            assert good is not None
            sent = browser.post(path, data={**fields, "csrf": good.group(1)})
            assert sent.status_code == 303, (path, sent.text[:300])
        assert registrations.status(seeded.platform, who(seeded, "dan"), "toy").may_participate
        dan.close()
        olga.close()


def test_an_organizer_approves_every_pending_registration_at_once(
    seeded: Seeded, tmp_path: Path
) -> None:
    version = registered_toy(seeded, tmp_path / "v2", mode="approval")
    for user in ("dan", "eve"):
        registrations.register(seeded.platform, who(seeded, user), "toy", version)
    done = registration_admin.approve_pending(seeded.platform, who(seeded, "olga"), "toy")
    assert sorted((d.user, d.state, d.notify) for d in done) == [
        ("dan", "approved", "dan"),
        ("eve", "approved", "eve"),
    ]
    assert registration_admin.pending_counts(seeded.platform, who(seeded, "olga")) == {"toy": 0}


def test_a_decision_is_mailed_to_the_person_and_the_csv_shows_their_address(
    tmp_path: Path, mailbox: Mailbox
) -> None:
    """The organizer's decision reaches the registrant by mail (a real SMTP server)."""
    found = seed(tmp_path / "service", **mail_settings(mailbox))
    try:
        platform = found.platform
        for name, address in (("dan", "dan@example.org"), ("eve", "eve@example.org")):
            found.tokens[name] = add_user(platform, name).token
            with platform.db.begin() as session:
                user = session.scalar(select(User).where(User.name == name))
                assert user is not None
                user.email, user.email_verified = address, 1.0
        version = registered_toy(found, tmp_path / "v2", mode="approval")
        olga = authenticate(platform, found.tokens["olga"])
        for name in ("dan", "eve"):
            registrations.register(
                platform, authenticate(platform, found.tokens[name]), "toy", version
            )
        registration_admin.decide(platform, olga, "toy", "dan", "approve")
        registration_admin.decide(platform, olga, "toy", "eve", "deny")
        approved = mailbox.wait("dan@example.org")
        assert approved["Subject"] == "You may take part in toy"
        assert "http://proctor.example/challenges/toy" in approved.get_content()
        denied = mailbox.wait("eve@example.org")
        assert "was not approved" in denied.get_content()
        rows = list(
            csv.DictReader(io.StringIO(registration_admin.participants_csv(platform, olga, "toy")))
        )
        assert {row["name"]: row["email"] for row in rows} == {
            "dan": "dan@example.org",
            "eve": "eve@example.org",
        }
    finally:
        found.platform.close()
