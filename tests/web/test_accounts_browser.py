"""A newcomer makes an account in Debian's Chromium and uses it from the command line.

A new person signs up on ``/signup``, opens the confirmation link from the mail a real SMTP
server on 127.0.0.1 received, signs in with the password, makes an API token on the account
page and lists their tokens with ``proctor token show`` and that token; then resets the
password through a mailed link and signs in with the new one. In approval mode, an
organizer approves the account in the console first. Each new page is photographed at
1,366 px and 390 px into ``docs/screenshots/``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_fixtures import Pages, sign_in
from playwright.sync_api import Page, expect
from served_host import PROCTOR
from service_seed import Seeded, seed, served
from smtp_fixtures import Mailbox, mail_settings

PASSWORD = "a long and secret phrase"


def _site(tmp_path: Path, mailbox: Mailbox, **settings: Any) -> Iterator[tuple[Seeded, str]]:
    seeded = seed(tmp_path / "service", **mail_settings(mailbox, **settings))
    with served(seeded.app) as url:
        yield seeded, url
    seeded.platform.close()


@pytest.fixture
def open_site(tmp_path: Path, mailbox: Mailbox) -> Iterator[tuple[Seeded, str]]:
    yield from _site(tmp_path, mailbox)


@pytest.fixture
def approval_site(tmp_path: Path, mailbox: Mailbox) -> Iterator[tuple[Seeded, str]]:
    yield from _site(tmp_path, mailbox, signup="approval")


def _sign_up_and_confirm(
    page: Page, url: str, mailbox: Mailbox, watched: Pages, *, shoot: bool = True
) -> None:
    """Sign up as ada through the form and confirm through the mailed link (photographed)."""
    page.goto(url)
    page.click("#signup-header")
    expect(page.locator("h1")).to_have_text("Make an account")
    if shoot:
        watched.shoot(page, "signup")
    page.fill("#signup input[name=name]", "ada")
    page.fill("#signup input[name=email]", "ada@example.org")
    page.fill("#signup input[name=password]", PASSWORD)
    page.click("#signup button[type=submit]")
    expect(page.locator("#mail-sent")).to_contain_text("confirm it is on its way")
    if shoot:
        watched.shoot(page, "signup-sent")
    link = mailbox.link(mailbox.wait("ada@example.org"), "/signup/verify")
    page.goto(link.replace("http://proctor.example", url))  # PROCTOR_PUBLIC_URL's stand-in
    expect(page.locator("#account")).to_have_text("ada")
    page.click("#confirm button[type=submit]")


def _sign_in(page: Page, login: str) -> None:
    page.fill("#password-login input[name=login]", login)
    page.fill("#password-login input[name=password]", PASSWORD)
    page.click("#password-login button[type=submit]")


def test_a_newcomer_signs_up_confirms_signs_in_and_uses_a_token_from_the_cli(
    open_site: tuple[Seeded, str], mailbox: Mailbox, watched: Pages
) -> None:
    _, url = open_site
    page = watched.open(url)
    _sign_up_and_confirm(page, url, mailbox, watched)
    expect(page.locator("#note")).to_contain_text("Your email is confirmed")
    watched.shoot(page, "signin")
    _sign_in(page, "ada@example.org")
    expect(page.locator("#me")).to_have_text("ada")

    page.click("#account-link")
    expect(page.locator("#no-tokens")).to_be_visible()
    page.click("#make-token button[type=submit]")
    token = page.locator("#token").inner_text().strip()
    watched.shoot(page, "account")
    shown = subprocess.run(
        [PROCTOR, "token", "show", "--server", url, "--token", token, "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    answer = json.loads(shown.stdout)
    assert answer["user"] == "ada" and answer["tokens"][0]["current"] is True

    page.goto(f"{url}/account")
    page.click("#tokens button[type=submit]")  # revoke it
    expect(page.locator("#no-tokens")).to_be_visible()
    refused = subprocess.run(
        [PROCTOR, "token", "show", "--server", url, "--token", token],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert refused.returncode != 0 and "revoked" in refused.stderr

    page.click("header form button[type=submit]")  # sign out
    page.goto(f"{url}/login")
    page.click("text=Forgot your password?")
    watched.shoot(page, "password-reset")
    page.fill("#reset input[name=email]", "ada@example.org")
    page.click("#reset button[type=submit]")
    expect(page.locator("#mail-sent")).to_contain_text("within 1 hour")
    link = mailbox.link(mailbox.wait("ada@example.org", 2), "/password-reset/new")
    page.goto(link.replace("http://proctor.example", url))
    watched.shoot(page, "password-new")
    page.fill("#new-password input[name=password]", "another secret phrase")
    page.click("#new-password button[type=submit]")
    expect(page.locator("#note")).to_contain_text("new password is set")
    page.fill("#password-login input[name=login]", "ada")
    page.fill("#password-login input[name=password]", "another secret phrase")
    page.click("#password-login button[type=submit]")
    expect(page.locator("#me")).to_have_text("ada")


def test_in_approval_mode_the_organizer_approves_the_newcomer_in_the_console(
    approval_site: tuple[Seeded, str], mailbox: Mailbox, watched: Pages
) -> None:
    seeded, url = approval_site
    page = watched.open(url)
    watched.expect_error(page, "401 \\(Unauthorized\\)")
    _sign_up_and_confirm(page, url, mailbox, watched, shoot=False)
    expect(page.locator("#note")).to_contain_text("An organizer approves new accounts")
    _sign_in(page, "ada")
    expect(page.locator(".error")).to_contain_text("waits for an organizer's approval")

    organizer = watched.open(url)
    sign_in(organizer, url, seeded.tokens["olga"])
    organizer.goto(f"{url}/console")
    organizer.click("text=accounts to approve")
    expect(organizer.locator("#pending")).to_contain_text("ada@example.org")
    watched.shoot(organizer, "console-accounts")
    organizer.click("#pending button:has-text('approve ada')")
    expect(organizer.locator("#none-waiting")).to_be_visible()
    assert "approved" in mailbox.wait("ada@example.org", 2)["Subject"]

    _sign_in(page, "ada")
    expect(page.locator("#me")).to_have_text("ada")
