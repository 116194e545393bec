"""Every page a participant or an organizer reaches, on a 390 px phone, in Debian's Chromium.

One served platform (the toy challenge with two tasks, two teams' real scored submissions) and
one browser walk every page family: home, challenge, board, submission, files, team, account,
sign-in, and the console's pages. None may overflow sideways: not the page, not a chart (a
chart scales to its box, every team's mark inside it), not the nav (it wraps), not a console
table even inside a box that scrolls (they read as cards: each submission's id and the phase
form in view). The board's
rows and the phases read as cards (rank, team and mean rank first, every task's score in
view), and the Publication table keeps its publish button. The board draws a panel per task
and one of its mean rank (photographed as ``docs/screenshots/board-tasks-*.png``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_fixtures import PHONE, SCREENSHOTS, VIEWPORTS, Pages
from playwright.sync_api import Page, expect
from service_seed import Seeded, run_queued, submit
from toy_challenge import make_entry
from toy_views import reinstall, scored_next

from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings

pytestmark = pytest.mark.sandbox

OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const found = [];
  if (document.documentElement.scrollWidth > width) {
    found.push(`page is ${document.documentElement.scrollWidth} px wide`);
  }
  const scrolls = e => ['auto', 'scroll', 'hidden'].includes(getComputedStyle(e).overflowX);
  const boxed = e => { for (let p = e.parentElement; p; p = p.parentElement) {
    if (scrolls(p) && p !== document.body && p !== document.documentElement) return true; }
    return false; };
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if (r.width && (r.right > width + 1 || r.left < -1) && !boxed(e)) {
      found.push(`${e.tagName}.${e.className.baseVal ?? e.className} spans ${r.left}..${r.right}`);
    }
  }
  for (const box of document.querySelectorAll('.plot-box')) {
    if (box.scrollWidth > box.clientWidth) found.push(`a chart scrolls in ${box.parentElement.id}`);
    const frame = box.getBoundingClientRect();
    for (const mark of box.querySelectorAll('circle, text, line, path')) {
      const r = mark.getBoundingClientRect();
      if (r.left < frame.left - 1 || r.right > frame.right + 1) {
        found.push(`a ${mark.tagName} of ${box.parentElement.id} sticks out of its chart`);
      }
    }
  }
  return found.slice(0, 5);
}"""


SCROLLED_TABLES = """() => [...document.querySelectorAll('main table')]
  .filter(t => { const box = t.closest('.table-box');
    return t.getBoundingClientRect().right > document.documentElement.clientWidth + 1
      || (box && box.scrollWidth > box.clientWidth + 1); })
  .map(t => t.id || t.className)"""
"""The tables wider than the phone, even inside a box that scrolls (the console's read as cards)."""


def fits(page: Page) -> None:
    """Nothing on ``page`` overflows sideways, charts and their marks included."""
    assert page.evaluate(OVERFLOW) == [], page.url


def in_view(page: Page, selector: str) -> None:
    """Every element ``selector`` finds lies inside the viewport's width, unscrolled."""
    boxes = [
        page.locator(selector).nth(n).bounding_box() for n in range(page.locator(selector).count())
    ]
    assert boxes, f"{selector} on {page.url}: none"
    for box in boxes:
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (
            f"{selector} on {page.url} is off-screen: {box}"
        )


def test_no_page_overflows_a_phone_and_what_matters_stays_in_view(
    site: tuple[Seeded, str],
    watched: Pages,
    shared_dir: Path,
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
) -> None:
    seeded, url = site
    task = {
        "public_inputs": "public",
        "hidden_inputs": "hidden",
        "hidden_references": "refs",
        "scorer": "physionet2018",
    }
    reinstall(  # two tasks: the board plots a panel per task and one of the mean rank
        seeded,
        shared_dir / "v2",
        tasks=[{"name": "arousal", **task}, {"name": "apnea", **task}],
        phases=[{"name": "final", "tasks": ["arousal", "apnea"]}],
        disclosure={"per_record": "full"},
    )
    sids = []
    for n, (user, low, high, flip) in enumerate(
        [("alice", "0.300", "0.700", 5), ("bob", "0.200", "0.800", 3), ("alice", "0.1", "0.9", 7)]
    ):
        sids.append(
            submit(
                seeded, user, make_entry(shared_dir / f"e{n}", next_sh=scored_next(low, high, flip))
            )
        )
        run_queued(seeded, sandbox, sandbox_settings)

    anonymous = watched.open(url, viewport=PHONE)
    for address in ("/", "/challenges/toy", "/login", "/password-reset"):
        anonymous.goto(url + address)
        fits(anonymous)

    alice = watched.open(url, seeded.tokens["alice"], PHONE)
    board = "/challenges/toy/leaderboards/default"
    for address in ("/", "/challenges/toy", board, "/challenges/toy/files", "/team", "/account"):
        alice.goto(url + address)
        fits(alice)
        if alice.locator("nav.challenge-nav a").count():
            in_view(alice, "nav.challenge-nav a")
    alice.goto(url + "/challenges/toy")
    in_view(alice, "#phases td[data-label=now]")
    alice.goto(url + board)
    in_view(alice, "#board tr.mine td:nth-child(2)")  # the team
    in_view(alice, "#board tr.mine td:nth-child(3)")  # its mean rank, the ranking column
    in_view(alice, "#board tr.mine td.score")  # each task's score: rows read as cards
    for chart in ("history-arousal", "history-apnea", "distribution-apnea", "mean-rank"):
        expect(alice.locator(f"#chart-{chart} svg.plot")).to_have_count(1)
    for label, viewport in VIEWPORTS.items():
        alice.set_viewport_size(viewport)
        alice.screenshot(path=str(SCREENSHOTS / f"board-tasks-{label}.png"), full_page=True)
    alice.set_viewport_size(PHONE)
    expect(alice.locator(".plot-box svg.plot").first).to_be_visible()
    for chart in ("history-arousal", "distribution-apnea", "mean-rank"):
        in_view(alice, f"#chart-{chart} circle.plot-dot")  # every team's mark, on screen
    alice.goto(f"{url}/submissions/{sids[0]}")
    fits(alice)
    assert alice.evaluate(SCROLLED_TABLES) == []  # two tasks' scores: a card per task
    expect(alice.locator("#scores")).to_be_hidden()
    for task in ("arousal", "apnea"):
        in_view(alice, f"#scores-cards tr:has-text('{task}') td[data-label]")
    alice.click("#choose-final")
    expect(alice.locator("#publications")).to_be_visible()
    fits(alice)
    in_view(alice, "#publications button")

    _console_fits(watched.open(url, seeded.tokens["olga"], PHONE), url, sids[1], board)


def _console_fits(olga: Page, url: str, sid: str, board: str) -> None:
    """The organizer's pages fit; the console's tables read as cards, its forms whole."""
    for address in (
        "/console",
        "/console/challenges/toy",
        "/console/flagged",
        "/console/install",
        "/console/users",
        f"/console/submissions/{sid}",
        "/console/challenges/toy/registrations",
        "/challenges/toy",
        board,
    ):
        answer = olga.goto(url + address)
        assert answer is not None and answer.ok, f"{address}: {answer and answer.status}"
        fits(olga)
        if address.startswith("/console"):
            assert olga.evaluate(SCROLLED_TABLES) == [], address  # cards, not a sideways box
    olga.goto(f"{url}/console/challenges/toy")
    in_view(olga, "#submissions td.card-title a")  # the identifying column: each submission
    in_view(olga, "#submissions td[data-label=status]")
    for part in ("input[name=opens]", "input[name=closes]", "button"):
        in_view(olga, f"#phases form.phase-times {part}")  # the phase form, whole
