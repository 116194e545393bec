"""What a participant looks at, in Debian's Chromium: live progress, plots, a phone, screenshots.

Real submissions of the toy challenge run through the service (the real sandbox and job
function). A participant watches a running submission's stage and case count change (the
page polls its JSON status from ``/static/live.js``) and, on hidden data disclosed at
``counts``, sees only "evaluating on hidden data"; reads the board with its plots on a 390 px
phone without the page scrolling sideways; and no page logs a console error (a violation of
the Content-Security-Policy is one). Each page is photographed at 1,366 and 390 px into
``docs/screenshots/``. What the plots may show follows the disclosure: at ``counts`` and
``none`` they show nothing the page would not.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from browser_fixtures import DESKTOP, PHONE, SCREENSHOTS, Pages, no_sideways_scroll
from playwright.sync_api import expect
from service_seed import Seeded, run_queued, submit
from toy_challenge import make_entry
from toy_views import reinstall, scored_next

from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings

pytestmark = pytest.mark.sandbox


SLOW_NEXT = """#!/bin/sh
# quiz: tr01 ends after 2 s, tr02 after 6 s (the page sees 0, then 1 of 2); exam: 2 s a case
case "$1" in tr01) sleep 2 ;; tr02) sleep 6 ;; *) sleep 2 ;; esac
n=$(cut -d' ' -f4 "$PROCTOR_DATA/$1.hea")
i=0
: > "$1.vec"
while [ $i -lt $n ]; do
  if [ $i -lt $((n / 2)) ]; then echo 0.100; else echo 0.900; fi >> "$1.vec"
  i=$((i + 1))
done
"""


def test_a_participant_watches_the_stage_and_case_count_change_live(
    site: tuple[Seeded, str],
    watched: Pages,
    shared_dir: Path,
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
) -> None:
    seeded, url = site
    sid = submit(seeded, "alice", make_entry(shared_dir / "slow", next_sh=SLOW_NEXT))
    page = watched.open(url, seeded.tokens["alice"])
    page.goto(f"{url}/submissions/{sid}")
    expect(page.locator("#status")).to_have_text("queued")
    expect(page.locator("#stage")).to_have_text("next in the queue")
    worker = threading.Thread(target=run_queued, args=(seeded, sandbox, sandbox_settings))
    worker.start()
    try:
        expect(page.locator("#stage")).to_have_text("stage quiz")
        expect(page.locator("#status")).to_have_text("running")
        expect(page.locator("#cases")).to_have_text("1 of 2 cases done")
        # the exam on hidden data, disclosed at counts: no stage name, no case count
        expect(page.locator("#stage")).to_have_text("evaluating on hidden data")
        expect(page.locator("#cases")).to_have_text("")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "submission-running-desktop.png"))
    finally:
        worker.join()
    expect(page.locator("#status")).to_have_text("scored")  # the page reloaded itself
    expect(page.locator("#scores")).to_contain_text("auroc")
    expect(page.locator("#live")).to_have_count(0)


def _submit_several(
    seeded: Seeded, shared_dir: Path, sandbox: BwrapSandbox, settings: Settings
) -> list[str]:
    """Real scored submissions of two teams with different scores."""
    made = []
    for n, (user, low, high, flip) in enumerate(
        [
            ("alice", "0.300", "0.700", 5),
            ("bob", "0.200", "0.800", 3),
            ("alice", "0.100", "0.900", 7),
            ("bob", "0.400", "0.600", 4),
        ]
    ):
        entry = make_entry(shared_dir / f"entry{n}", next_sh=scored_next(low, high, flip))
        made.append(submit(seeded, user, entry))
        run_queued(seeded, sandbox, settings)
    return made


def test_the_plots_show_on_desktop_and_phone_and_every_page_is_photographed(
    site: tuple[Seeded, str],
    watched: Pages,
    shared_dir: Path,
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
) -> None:
    seeded, url = site
    reinstall(
        seeded,
        shared_dir / "v2",
        precision={"auprc": 3, "brier": 2},
        disclosure={"per_record": "full"},
        phases=[{"name": "final", "tasks": ["arousal"], "quota": {"per_day": 5}}],
    )
    sids = _submit_several(seeded, shared_dir, sandbox, sandbox_settings)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    addresses = {
        "home": "/",
        "challenge": "/challenges/toy",
        "data-page": "/challenges/toy/pages/data",
        "board": "/challenges/toy/leaderboards/default",
        "submission": f"/submissions/{sids[0]}",
    }
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page = watched.open(url, seeded.tokens["alice"], viewport)
        for name, address in addresses.items():
            page.goto(url + address)
            watched.valid_html(page)
            if label == "phone":
                no_sideways_scroll(page)
            page.screenshot(path=str(SCREENSHOTS / f"{name}-{label}.png"), full_page=True)
        page.goto(f"{url}/challenges/toy/leaderboards/default")
        for chart in ("history", "distribution"):
            expect(page.locator(f"#chart-{chart} svg[role=img] title").first).not_to_be_empty()
            expect(page.locator(f"#chart-{chart} details table")).to_contain_text("amber")
            expect(page.locator(f"#chart-{chart} ul.legend li.mine")).to_have_text("amber (you)")
        # each team's intervals are a point ([0.839, 0.839] from three records): not drawn
        expect(page.locator("#chart-intervals")).to_have_count(0)
        expect(page.locator("#board")).not_to_contain_text("[0.839, 0.839]")
        expect(page.locator("#board th").nth(4)).to_contain_text("higher is better")
        expect(page.locator("#board tr.mine")).to_contain_text("amber")
        assert re.search(
            r"^\d\.\d{3}$", page.locator("#board td.score").first.inner_text().split()[0]
        )
        page.goto(f"{url}/submissions/{sids[0]}")
        expect(page.locator("#chart-interval")).to_have_count(0)  # intervals without width
        page.goto(f"{url}/challenges/toy")
        expect(page.locator("#chart-mine svg.plot")).to_have_count(1)
        expect(page.locator("#quota")).to_contain_text("3 left today")
        expect(page.locator(".bundle-page")).to_contain_text("Find the arousals.")
        assert "alert(1)" not in page.content()
        expect(page.locator("#submissions")).not_to_contain_text(sids[1][:12])  # bob's
    anonymous = watched.open(url, viewport=PHONE)
    anonymous.goto(f"{url}/login")
    anonymous.screenshot(path=str(SCREENSHOTS / "login-phone.png"), full_page=True)


@pytest.mark.parametrize(
    ("disclosure", "board_readable"),
    [({"per_record": "none"}, True), ({"score": "none"}, False)],
    ids=["exam-counts", "score-none"],
)
def test_plots_show_no_more_than_the_disclosure_allows(
    site: tuple[Seeded, str],
    watched: Pages,
    shared_dir: Path,
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
    disclosure: dict[str, str],
    board_readable: bool,
) -> None:
    seeded, url = site
    reinstall(seeded, shared_dir / "v2", disclosure={"exam": "counts", **disclosure})
    sids = _submit_several(seeded, shared_dir, sandbox, sandbox_settings)
    page = watched.open(url, seeded.tokens["alice"])
    if not board_readable:
        watched.expect_error(page, "403 \\(Forbidden\\)")
    answer = page.goto(f"{url}/challenges/toy/leaderboards/default")
    assert answer is not None
    if board_readable:
        expect(page.locator("#chart-history svg.plot")).to_have_count(1)
        # no per-case values disclosed: no interval anywhere, no count of zero-filled cases
        expect(page.locator("#chart-intervals")).to_have_count(0)
        assert "records_zero_filled" not in page.content()
    else:
        assert answer.status == 403
        expect(page.locator("svg")).to_have_count(0)
    page.goto(f"{url}/challenges/toy")
    if board_readable:
        expect(page.locator("#chart-mine svg.plot")).to_have_count(1)
    else:
        expect(page.locator("#chart-mine")).to_have_count(0)
        expect(page.locator("#submissions")).not_to_contain_text("auroc")
    page.goto(f"{url}/submissions/{sids[0]}")
    expect(page.locator("#stages")).to_contain_text("exam")
    expect(page.locator("#chart-interval")).to_have_count(0)  # the board gives no interval
    if not board_readable:
        expect(page.locator("#scores")).to_have_count(0)
