"""The organizer console in a real browser: Debian's Chromium driven by playwright.

An organizer signs in and finds another team's failed submission in the console's list, reads
its exam diagnostics (the hidden cases' stderr tails, the setup output) on its record page,
downloads its entry (the bytes as uploaded), refunds a flagged job, uploads a new bundle
(corrected references), rescores the phase and sees the scores and ranks before and after,
and closes the phase early. A participant gets 404 from every console page. No page has a
console error (a Content-Security-Policy violation is one). Each console page is
photographed at 1,366 px and 390 px into ``docs/screenshots/``.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from browser_fixtures import DESKTOP, SCREENSHOTS, Pages, sign_in
from playwright.sync_api import Page, expect
from service_seed import Seeded, archive, run_queued
from sqlalchemy import select
from toy_challenge import HIDDEN, LENGTH, make_challenge, make_entry, make_exam_entry

from proctor.errors import RefusedError
from proctor.formats.arousal_mat import write_arousal_reference
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import authenticate
from proctor.settings import Settings
from proctor.store import jobs
from proctor.store.models import Score

pytestmark = pytest.mark.sandbox

EXAM_LOG = "EXAM-STDERR-5d2e"
SETUP_LOG = "SETUP-OUT-81fa"
FAILING_EXAM = f"""  te*) echo "{EXAM_LOG} $1" >&2; sleep 60 ;;"""
"""Hidden cases hang: with 3 s a case and 4 s for the exam, the exam times out (entry)."""
FIRST_SCREEN = {"width": 1366, "height": 768}
"""A laptop's first screen: the record's failure must show without scrolling."""


def _submit(seeded: Seeded, user: str, data: bytes) -> str:
    principal = authenticate(seeded.platform, seeded.tokens[user])
    receipt = submissions.submit(seeded.platform, principal, "toy", None, io.BytesIO(data))
    return receipt.submission


def _lost(seeded: Seeded, data: bytes) -> str:
    """A submission of bob's whose worker was lost (failed: infrastructure, flagged)."""
    sid = _submit(seeded, "bob", data)
    assert jobs.claim(seeded.platform.db, "doomed-worker", 1.0) is not None
    assert jobs.reap(seeded.platform.db, 1, now=time.time() + 60)[0].failed
    return sid


def _new_bundle(root: Path, **changes: str) -> Path:
    """The toy bundle with corrected references (a rescore changes the scores), archived."""
    bundle = make_challenge(root / "toy")
    if changes:
        spec = yaml.safe_load((bundle / "challenge.yaml").read_text())
        (bundle / "challenge.yaml").write_text(yaml.safe_dump({**spec, **changes}))
    labels = np.zeros(LENGTH)
    labels[LENGTH // 4 :] = 1
    for record in HIDDEN:
        write_arousal_reference(bundle / "refs" / f"{record}-arousal.mat", labels)
    path = root / "toy-v2.tar.gz"
    path.write_bytes(archive(bundle))
    return path


def _install(seeded: Seeded, archived: Path) -> None:
    """Install a bundle archive as another organizer would meanwhile."""
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    with archived.open("rb") as stream:
        installs.install_archive(seeded.platform, olga, stream)


def _auprc(seeded: Seeded) -> list[float | None]:
    """Every stored AUPRC, as the boards read them."""
    with seeded.platform.db() as session:
        return sorted(session.scalars(select(Score.value).where(Score.metric == "auprc")).all())


def _reason_on_the_first_screen(page: Page) -> None:
    """The record's first screen (1366 x 768, unscrolled) says why it failed, whose fault it
    was, the reason's last line (a hidden case's stderr) and links the full log."""
    page.set_viewport_size(FIRST_SCREEN)
    reason = page.locator("#reason")
    expect(reason).to_contain_text("entry failure in the exam stage")
    expect(reason).to_contain_text("owner: the participant's entry")
    last = page.locator("#reason pre.reason-lines")
    assert last.inner_text().splitlines()[-1].startswith(f"{EXAM_LOG} te0")
    assert page.evaluate("window.scrollY") == 0
    box = last.bounding_box()
    assert box is not None and box["y"] + box["height"] <= FIRST_SCREEN["height"], box
    full_log = page.locator("#reason a").get_attribute("href")
    assert full_log is not None and page.locator(full_log).count() == 1
    page.screenshot(path=str(SCREENSHOTS / "console-record-first-screen.png"))
    page.set_viewport_size(DESKTOP)


def test_an_organizer_reads_diagnostics_refunds_rescores_installs_and_closes_a_phase(
    site: tuple[Seeded, str],
    shared_dir: Path,
    watched: Pages,
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
) -> None:
    seeded, url = site
    tight = make_challenge(shared_dir / "tight" / "toy", case_s=3, stage_s=4)
    installs.install(
        seeded.platform, authenticate(seeded.platform, seeded.tokens["olga"]), str(tight)
    )
    failing = make_exam_entry(shared_dir / "failing", FAILING_EXAM)
    (failing / "setup.sh").write_text(f"#!/bin/sh\necho {SETUP_LOG}\n")
    uploaded = archive(failing)
    failed = _submit(seeded, "bob", uploaded)
    good = archive(make_entry(shared_dir / "good"))
    scored = _submit(seeded, "alice", good)
    run_queued(seeded, sandbox, sandbox_settings)
    _lost(seeded, good)
    second_lost = _lost(seeded, good)  # the first per team and phase was refunded at once
    page = watched.open(url, seeded.tokens["olga"], downloads=True)
    page.goto(f"{url}/challenges/toy")  # the participants' page links the console for organizers
    watched.shoot(page, "challenge-organizer")
    page.click("#console-link a")
    expect(page.locator("#filters")).to_be_visible()
    page.click("#console")  # the header's link: the console's start
    watched.shoot(page, "console-home")
    page.click("#challenges a")
    page.select_option("select[name=status]", "failed")
    page.select_option("select[name=failure]", "entry")
    page.fill("input[name=team]", "blue")
    page.click("#filters button")
    expect(page.locator("#submissions")).to_contain_text(failed)
    expect(page.locator("#submissions")).not_to_contain_text(scored)
    watched.shoot(page, "console-challenge")

    page.click(f"#submissions a:text-is('{failed}')")
    expect(page.locator("#status")).to_have_text("failed")
    _reason_on_the_first_screen(page)
    expect(page.locator("table.cases")).to_contain_text(f"{EXAM_LOG} te01")
    expect(page.locator("section.task")).to_contain_text(SETUP_LOG)
    assert page.locator("table.cases pre").first.evaluate("e => e.tagName") == "PRE"
    watched.shoot(page, "console-record")
    with page.expect_download() as download:
        page.click("#entry")
    saved = shared_dir / "downloaded"
    download.value.save_as(saved)
    assert saved.read_bytes() == uploaded

    page.goto(f"{url}/console/flagged")
    page.click(f"button:text-is('refund {second_lost}')")
    row = page.locator(f"#flagged tr:has-text('{second_lost}')")
    expect(row).to_contain_text("refunded")
    expect(row.locator("button")).to_have_count(0)
    watched.shoot(page, "console-flagged")

    before = _auprc(seeded)
    page.goto(f"{url}/console/install")
    page.set_input_files("input[name=bundle]", str(_new_bundle(shared_dir / "v2")))
    page.click("#install button")
    expect(page.locator("#installed")).to_contain_text("version 3")
    expect(page.locator("#installed-console")).to_have_text("Toy records challenge (toy)")
    assert page.locator("#installed-console").get_attribute("href") == "/console/challenges/toy"
    assert page.locator("#installed-page").get_attribute("href") == "/challenges/toy"
    watched.shoot(page, "console-install")

    page.goto(f"{url}/console/challenges/toy")
    page.click("#rescore button")  # a preview: nothing changes yet
    expect(page.locator("#summary")).to_contain_text("1 changed")
    expect(page.locator("#score-diff")).to_contain_text(scored)
    assert _auprc(seeded) == before
    watched.shoot(page, "console-rescore-preview")
    _install(seeded, _new_bundle(shared_dir / "v3", title="corrected again"))  # v4 meanwhile
    watched.expect_error(page, "409 \\(Conflict\\)")
    page.click("#apply button")
    expect(page.locator("#stale")).to_contain_text("version 4 of the bundle was installed since")
    assert _auprc(seeded) == before
    page.click("#preview-again button")
    expect(page.locator("#summary")).to_contain_text("version 4")
    page.click("#apply button")
    expect(page.locator("#state")).to_contain_text("Applied")
    assert _auprc(seeded) != before
    watched.shoot(page, "console-rescored")

    page.goto(f"{url}/console/challenges/toy")
    page.fill("form.phase-times input[name=closes]", "2021-06-01T12:00:00")
    page.click("form.phase-times button")
    expect(page.locator("#phases")).to_contain_text("2021-06-01")
    with pytest.raises(RefusedError):
        _submit(seeded, "alice", good)

    page.goto(f"{url}/console/users")
    page.fill("#add-user input[name=user]", "carol")
    page.fill("#add-user input[name=team]", "amber")
    page.click("#add-user button")
    token = page.locator("#token").inner_text().strip()
    assert authenticate(seeded.platform, token).name == "carol"
    watched.shoot(page, "console-users")

    watched.expect_error(page, "404 \\(Not Found\\)")
    sign_in(page, url, seeded.tokens["alice"])
    for path in ("/console", "/console/challenges/toy", f"/console/submissions/{scored}",
                 f"/console/submissions/{scored}/entry", "/console/users"):  # fmt: skip
        answer = page.goto(f"{url}{path}")
        assert answer is not None and answer.status == 404, path
