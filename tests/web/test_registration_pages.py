"""Registration and teams in a real browser: Debian's Chromium driven by playwright.

A new participant opens a challenge in ``approval`` mode, reads and accepts its terms, and
waits; the organizer sees the registration pending on the console's home and approves it;
the participant creates a team and makes an invitation link, which a second person opens and
joins through. No page has a console error; each new page is photographed at 1,366 px and
390 px into ``docs/screenshots/``.
"""

from __future__ import annotations

from pathlib import Path

from browser_fixtures import Pages
from playwright.sync_api import expect
from registration_fixtures import registered_toy
from service_seed import Seeded

from proctor.services.platform.accounts import add_user


def test_a_participant_registers_is_approved_forms_a_team_and_a_second_joins_by_link(
    site: tuple[Seeded, str], watched: Pages, tmp_path: Path
) -> None:
    seeded, url = site
    registered_toy(seeded, tmp_path / "v2", mode="approval", team_size=2)
    tokens = {name: add_user(seeded.platform, name).token for name in ("dan", "eve")}

    dan = watched.open(f"{url}", tokens["dan"])
    dan.goto(f"{url}/challenges/toy")
    expect(dan.locator("#registration-state")).to_contain_text("egister for this challenge")
    expect(dan.locator("#cannot-submit")).to_be_visible()
    expect(dan.locator("form.submit")).to_have_count(0)
    watched.shoot(dan, "challenge-unregistered")
    dan.click("#register-link")
    expect(dan.locator("#terms")).to_contain_text("Share no hidden data")
    watched.shoot(dan, "register")
    dan.check("#register input[name=accept]")
    dan.click("#register button[type=submit]")
    expect(dan.locator("#registration-state")).to_contain_text("waits for an organizer")

    olga = watched.open(url, seeded.tokens["olga"])
    olga.goto(f"{url}/console")
    expect(olga.locator("#challenges")).to_contain_text("1 pending")
    olga.click("#registrations-toy")
    expect(olga.locator("#registration-dan")).to_contain_text("pending")
    watched.shoot(olga, "console-registrations")
    olga.click("#registration-dan button[aria-label='approve dan']")
    expect(olga.locator("#registration-dan")).to_contain_text("approved")
    expect(olga.locator("#pending-count")).to_have_text("0")

    dan.goto(f"{url}/challenges/toy")
    expect(dan.locator("#registration-state")).to_contain_text("You are registered")
    expect(dan.locator("#cannot-submit")).to_contain_text("create a team or join one")
    dan.click("#team-link")
    watched.shoot(dan, "team-none")
    dan.fill("#create-team input[name=team]", "dragons")
    dan.click("#create-team button[type=submit]")
    expect(dan.locator("h1")).to_have_text("Team dragons")
    dan.click("#invite button[type=submit]")
    link = dan.locator("#invite-link").get_attribute("href")
    assert link is not None and link.startswith(f"{url}/teams/join/")
    watched.shoot(dan, "team")

    eve = watched.open(url, tokens["eve"])
    eve.goto(link)
    expect(eve.locator("h1")).to_have_text("Join team dragons")
    watched.shoot(eve, "team-join")
    eve.click("#join button[type=submit]")
    expect(eve.locator("#members")).to_contain_text("dan")
    expect(eve.locator("#members")).to_contain_text("eve")
    expect(eve.locator("#me")).to_have_text("eve")

    dan.goto(f"{url}/challenges/toy")
    expect(dan.locator("form.submit")).to_be_visible()  # registered, approved, in a team
    eve.goto(f"{url}/challenges/toy")
    expect(eve.locator("#cannot-submit")).to_contain_text("egister for this challenge")
