"""Every page a participant or an organizer reaches, on a 390 px phone, in Debian's Chromium.

One served platform (the seeded toy challenge, two teams' real scored submissions) and one
browser walk every page family: home, challenge, board, submission, files, team, account,
sign-in, and the console's pages. None may overflow sideways: not the page, not a chart (a
chart scales to its box, every team's mark inside it), not the nav (it wraps). A table keeps
its identifying and ranking columns in view (the board's team and mean rank; the phases'
state), and the Publication table its publish button.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from browser_fixtures import PHONE, Pages
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings
from service_seed import Seeded, run_queued, submit
from test_web_views import scored_next
from toy_challenge import make_entry

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
    expect(alice.locator(".plot-box svg.plot").first).to_be_visible()
    for chart in ("history", "distribution"):
        in_view(alice, f"#chart-{chart} circle.plot-dot")  # every team's mark, on screen
    alice.goto(f"{url}/submissions/{sids[0]}")
    fits(alice)
    alice.click("#choose-final")
    expect(alice.locator("#publications")).to_be_visible()
    fits(alice)
    in_view(alice, "#publications button")

    olga = watched.open(url, seeded.tokens["olga"], PHONE)
    for address in (
        "/console",
        "/console/challenges/toy",
        "/console/flagged",
        "/console/install",
        "/console/users",
        f"/console/submissions/{sids[1]}",
        "/console/challenges/toy/registrations",
        "/challenges/toy",
        board,
    ):
        answer = olga.goto(url + address)
        assert answer is not None and answer.ok, f"{address}: {answer and answer.status}"
        fits(olga)
