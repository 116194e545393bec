"""An organizer mails a challenge's participants (a real SMTP server, the real sandbox).

Audiences by how each team fares, confirmed addresses only, one mail per person, one
announcement per 15 minutes, the audit log, the console's form behind its CSRF token.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from service_seed import Seeded, run_queued, seed, served, submit
from smtp_fixtures import Mailbox, mail_settings
from sqlalchemy import select
from toy_challenge import make_entry

from proctor.errors import NotFoundError, RefusedError, UsageError
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform import announcements
from proctor.services.platform.accounts import add_user, authenticate
from proctor.settings import Settings
from proctor.store.models import AuditEvent, User

ADDRESSES = {"alice": "alice@example.org", "bob": "bob@example.org", "dan": "dan@example.org"}


def _confirm(seeded: Seeded, name: str, address: str, *, verified: bool = True) -> None:
    with seeded.platform.db.begin() as session:
        user = session.scalar(select(User).where(User.name == name))
        assert user is not None
        user.email, user.email_verified = address, (1.0 if verified else None)


@pytest.fixture
def fared(
    shared_dir: Path, sandbox: BwrapSandbox, sandbox_settings: Settings, mailbox: Mailbox
) -> Iterator[Seeded]:
    """alice's team scored, bob's team's last submission failed, dan submitted nothing."""
    seeded = seed(shared_dir / "service", **mail_settings(mailbox))
    seeded.tokens["dan"] = add_user(seeded.platform, "dan", team="dune").token
    seeded.tokens["carl"] = add_user(seeded.platform, "carl", team="amber").token
    for name, address in ADDRESSES.items():
        _confirm(seeded, name, address)
    _confirm(seeded, "carl", "carl@example.org", verified=False)  # never confirmed: not mailed
    submit(seeded, "alice", make_entry(shared_dir / "good"))
    submit(seeded, "bob", make_entry(shared_dir / "bad", next_sh="#!/bin/sh\nexit 3\n"))
    run_queued(seeded, sandbox, sandbox_settings)
    yield seeded
    seeded.platform.close()


def test_each_audience_gets_one_mail_per_confirmed_person(fared: Seeded, mailbox: Mailbox) -> None:
    olga = authenticate(fared.platform, fared.tokens["olga"])
    assert announcements.recipients(fared.platform, "toy", "scored") == [ADDRESSES["alice"]]
    assert announcements.recipients(fared.platform, "toy", "failed") == [ADDRESSES["bob"]]
    # no registration block: everyone who submitted
    assert announcements.recipients(fared.platform, "toy", "registered") == [
        ADDRESSES["alice"],
        ADDRESSES["bob"],
    ]
    done = announcements.email_participants(
        fared.platform, olga, "toy", audience="failed", subject="Your last run", body="See the log."
    )
    assert (done.sent, done.failed, done.audience) == (1, 0, "failed")
    got = mailbox.wait(ADDRESSES["bob"])
    assert got["Subject"] == "[toy] Your last run"
    assert got["To"] == ADDRESSES["bob"]  # one mail each: nobody sees another's address
    assert "See the log." in got.get_content()
    assert mailbox.to(ADDRESSES["alice"]) == []
    with fared.platform.db() as session:
        events = session.scalars(
            select(AuditEvent).where(AuditEvent.action == announcements.ACTION)
        ).all()
    assert [(e.actor, e.subject) for e in events] == [("olga", "toy")]
    assert "audience=failed to=1" in events[0].detail


def test_a_second_announcement_within_the_gap_is_refused(fared: Seeded, mailbox: Mailbox) -> None:
    olga = authenticate(fared.platform, fared.tokens["olga"])
    announcements.email_participants(
        fared.platform, olga, "toy", audience="scored", subject="Well done", body="Thanks."
    )
    with pytest.raises(RefusedError, match="wait 15 min"):
        announcements.email_participants(
            fared.platform, olga, "toy", audience="registered", subject="Again", body="Hi."
        )


def test_bad_announcements_are_refused_before_any_mail(fared: Seeded, mailbox: Mailbox) -> None:
    olga = authenticate(fared.platform, fared.tokens["olga"])
    alice = authenticate(fared.platform, fared.tokens["alice"])
    with pytest.raises(NotFoundError):  # a participant learns nothing of the console
        announcements.email_participants(
            fared.platform, alice, "toy", audience="scored", subject="x", body="y"
        )
    with pytest.raises(UsageError, match="choose one of"):
        announcements.email_participants(
            fared.platform, olga, "toy", audience="everyone", subject="x", body="y"
        )
    with pytest.raises(UsageError):  # a subject that would add a header
        announcements.email_participants(
            fared.platform, olga, "toy", audience="scored", subject="Hi\nBcc: x@evil", body="y"
        )
    with pytest.raises(UsageError, match="subject and a message"):
        announcements.email_participants(
            fared.platform, olga, "toy", audience="scored", subject=" ", body="y"
        )
    assert mailbox.mails == []


def test_the_console_form_mails_and_says_how_many(fared: Seeded, mailbox: Mailbox) -> None:
    with served(fared.app) as url, httpx.Client(base_url=url, timeout=60) as http:
        http.post("/login", data={"token": fared.tokens["olga"]})  # no CSRF token yet: refused
        page = http.get("/login").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert csrf is not None
        http.post("/login", data={"token": fared.tokens["olga"], "csrf": csrf.group(1)})
        shown = http.get("/console/challenges/toy/registrations").text
        token = re.search(r'name="csrf" value="([^"]+)"', shown)
        assert token is not None and 'id="announce"' in shown
        fields = {"audience": "scored", "subject": "Hello", "body": "Welcome."}
        refused = http.post("/console/challenges/toy/announcements", data=fields)
        assert refused.status_code == 403
        answer = http.post(
            "/console/challenges/toy/announcements", data={**fields, "csrf": token.group(1)}
        )
        assert answer.status_code == 200, answer.text[-500:]
        assert "Mailed 1 person (scored)" in answer.text
    assert mailbox.wait(ADDRESSES["alice"])["Subject"] == "[toy] Hello"
