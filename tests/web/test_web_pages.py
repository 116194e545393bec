"""The pages for people, in a real browser: Debian's Chromium driven by playwright.

A participant signs in with the API token ``proctor user add`` printed, submits an entry
archive through the challenge page's form, watches the submission's page reload itself until
the real job (bwrap sandbox, the executor's job function) has scored it, and finds the team on
the public board. Another team's participant sees none of it. The forms carry the pages' CSRF
token (the browser sends it as any form field); forms posted from another site, or from
``Origin: null``, are refused even with that token, and what participants wrote is shown as
text, never as markup. ``tests/web/test_web_csrf.py`` attacks every form at the HTTP level.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from browser_fixtures import Pages, sign_in
from playwright.sync_api import expect
from service_seed import Seeded, archive, run_queued, submit
from sqlalchemy import func, select
from toy_challenge import make_entry

from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings
from proctor.store.models import SubmissionRow

pytestmark = pytest.mark.sandbox


def test_a_participant_submits_watches_the_evaluation_and_finds_the_board(
    site: tuple[Seeded, str],
    watched: Pages,
    shared_dir: Path,
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
) -> None:
    seeded, url = site
    page = watched.open(url)
    page.goto(url)
    page.click("text=toy")
    expect(page.locator("h1")).to_contain_text("Toy records challenge")
    expect(page.get_by_text("Sign in to submit an entry")).to_be_visible()

    sign_in(page, url, seeded.tokens["alice"])
    expect(page.locator("#me")).to_have_text("alice")
    page.goto(f"{url}/challenges/toy")
    entry = shared_dir / "entry.tar.gz"
    entry.write_bytes(archive(make_entry(shared_dir / "entry")))
    page.set_input_files("input[name=entry]", str(entry))
    page.click("form[enctype='multipart/form-data'] button[type=submit]")
    expect(page).to_have_url(re.compile(r"/submissions/[0-9a-f]+$"))
    expect(page.locator("#status")).to_have_text("queued")

    run_queued(seeded, sandbox, sandbox_settings)  # a worker's job, while the page waits
    expect(page.locator("#status")).to_have_text("scored")  # the page reloads itself
    expect(page.locator("#scores")).to_contain_text("arousal")
    expect(page.locator("#stages")).to_contain_text("exam")
    page.click("#choose-final")
    expect(page.locator("#final")).to_contain_text("one of your team's final entries")
    shown = page.locator("#publications td:nth-child(3)")
    expect(shown).to_have_text("not published")
    page.click("#publications button:text-is('publish')")
    expect(shown).to_have_text("published")
    page.click("#publications button:text-is('withdraw')")
    expect(shown).to_have_text("not published")

    page.click("text=back to toy")
    expect(page.locator("#submissions")).to_contain_text("scored")
    assert "/console" not in page.content()  # the console's links are for organizers only
    page.click("a:text-is('default')")
    expect(page.locator("#board")).to_contain_text("amber")


def test_another_team_sees_nothing_of_a_submission(
    site: tuple[Seeded, str], watched: Pages, shared_dir: Path
) -> None:
    seeded, url = site
    sid = submit(seeded, "alice", make_entry(shared_dir / "entry"))
    page = watched.open(url, seeded.tokens["bob"])
    watched.expect_error(page, "404 \\(Not Found\\)")
    answer = page.goto(f"{url}/submissions/{sid}")
    assert answer is not None and answer.status == 404
    expect(page.locator(".error")).to_contain_text(f"no submission {sid!r}")
    page.goto(f"{url}/challenges/toy")
    expect(page.get_by_text("None yet.")).to_be_visible()
    assert sid not in page.content()


def test_a_wrong_token_is_refused_with_what_to_do(site: tuple[Seeded, str], watched: Pages) -> None:
    _, url = site
    page = watched.open(url)
    watched.expect_error(page, "401 \\(Unauthorized\\)")
    page.goto(f"{url}/login")
    page.fill("input[name=token]", "not-a-token")
    page.click("#token-login button[type=submit]")
    expect(page.locator(".error")).to_contain_text("ask an organizer for a new one")
    expect(page.locator("#me")).to_have_count(0)


def test_signing_in_over_another_session_keeps_the_header_true(
    site: tuple[Seeded, str], watched: Pages
) -> None:
    """Another user's token replaces the session; a refused one (a wrong token, a login form
    shown before another tab signed in) changes nothing and the header names who is still
    signed in (it once showed nobody signed in)."""
    seeded, url = site
    page = watched.open(url, seeded.tokens["alice"])
    watched.expect_error(page, "40[13] \\((Unauthorized|Forbidden)\\)")
    page.goto(f"{url}/login")
    expect(page.locator("#signed-in-note")).to_contain_text("alice")
    watched.shoot(page, "login-signed-in")
    page.fill("#token-login input[name=token]", "not-a-token")
    page.click("#token-login button[type=submit]")
    expect(page.locator(".error")).to_contain_text("not valid")
    expect(page.locator("#me")).to_have_text("alice")

    page.goto(f"{url}/login")  # its form's token belongs to alice's session
    other_tab = page.context.new_page()
    sign_in(other_tab, url, seeded.tokens["bob"])
    page.fill("#token-login input[name=token]", seeded.tokens["olga"])
    page.click("#token-login button[type=submit]")
    expect(page.locator(".error")).to_contain_text("reload Proctor's page")
    expect(page.locator("#me")).to_have_text("bob")

    sign_in(page, url, seeded.tokens["olga"])
    expect(page.locator("#me")).to_have_text("olga")
    page.goto(f"{url}/challenges/toy")
    expect(page.locator("#me")).to_have_text("olga")


def test_a_form_from_another_site_is_refused_and_text_stays_text(
    site: tuple[Seeded, str], shared_dir: Path
) -> None:
    seeded, url = site
    cookies = {"proctor_token": seeded.tokens["alice"]}
    with httpx.Client(base_url=url, cookies=cookies) as http:
        token = re.search(r'name="csrf" value="([^"]+)"', http.get("/challenges/toy").text)
        assert token is not None  # the page's own token: only the origin is wrong below
        upload = archive(make_entry(shared_dir / "entry"))
        for origin in ("http://evil.example", "null"):
            foreign = http.post(
                "/challenges/toy/submit",
                data={"csrf": token.group(1)},
                files={"entry": ("entry.tar.gz", upload)},
                headers={"Origin": origin},
            )
            assert foreign.status_code == 403 and "another site" in foreign.text
        with seeded.platform.db() as session:
            assert session.scalar(select(func.count()).select_from(SubmissionRow)) == 0
        missing = http.get("/challenges/<img src=x onerror=alert(1)>")
    assert missing.status_code == 404 and "no challenge" in missing.text
    assert "<img" not in missing.text and "&lt;img src=x onerror=alert(1)&gt;" in missing.text
