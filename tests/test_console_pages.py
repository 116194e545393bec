"""The organizer console in a real browser: Debian's Chromium driven by playwright.

An organizer signs in and finds another team's failed submission in the console's list, reads
its exam diagnostics (the hidden cases' stderr tails, the setup output) on its record page,
downloads its entry (the bytes as uploaded), refunds a flagged job, uploads a new bundle
(corrected references), rescores the phase and sees the scores and ranks before and after,
and closes the phase early. A participant gets 404 from every console page. No page has a
console error (a Content-Security-Policy violation is one). Each console page is
photographed at 1280 px and 390 px into ``docs/screenshots/``.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from proctor.errors import RefusedError
from proctor.formats.arousal_mat import write_arousal_reference
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import authenticate
from proctor.settings import Settings
from proctor.store import jobs
from service_seed import Seeded, archive, run_queued, seed, served
from toy_challenge import HIDDEN, LENGTH, make_challenge, make_entry, make_exam_entry

pytestmark = pytest.mark.sandbox

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 20_000
SCREENSHOTS = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
VIEWPORTS = {"desktop": (1280, 900), "phone": (390, 844)}
EXAM_LOG = "EXAM-STDERR-5d2e"
SETUP_LOG = "SETUP-OUT-81fa"
FAILING_EXAM = f"""  te*) echo "{EXAM_LOG} $1" >&2; sleep 60 ;;"""
"""Hidden cases hang: with 3 s a case and 4 s for the exam, the exam times out (entry)."""

if not CHROMIUM.exists():
    pytest.skip(
        "Debian's chromium is not installed: `make test` installs it (apt-get install chromium)",
        allow_module_level=True,
    )

from playwright.sync_api import Browser, ConsoleMessage, Page, expect, sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


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


def _new_bundle(root: Path) -> Path:
    """The toy bundle with corrected references (a rescore changes the scores), archived."""
    bundle = make_challenge(root / "toy")
    labels = np.zeros(LENGTH)
    labels[LENGTH // 4 :] = 1
    for record in HIDDEN:
        write_arousal_reference(bundle / "refs" / f"{record}-arousal.mat", labels)
    path = root / "toy-v2.tar.gz"
    path.write_bytes(archive(bundle))
    return path


def _shoot(page: Page, name: str) -> None:
    """Photograph the page at each viewport; the phone's must not scroll sideways."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for label, (width, height) in VIEWPORTS.items():
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(SCREENSHOTS / f"console-{name}-{label}.png"), full_page=True)
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= width, f"{name} scrolls sideways at {width} px ({wide} px wide)"
    page.set_viewport_size({"width": 1280, "height": 900})


@pytest.fixture
def errors() -> list[str]:
    return []


@pytest.fixture
def page(browser: Browser, errors: list[str]) -> Iterator[Page]:
    context = browser.new_context(accept_downloads=True)
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)

    def keep(message: ConsoleMessage) -> None:
        if message.type == "error" and "404" not in message.text and "401" not in message.text:
            errors.append(message.text)

    opened.on("console", keep)
    yield opened
    context.close()


def _sign_in(page: Page, url: str, token: str) -> None:
    page.goto(f"{url}/login")
    page.fill("input[name=token]", token)
    page.click("button[type=submit]")
    expect(page.locator("#me")).to_be_visible()


def test_an_organizer_reads_diagnostics_refunds_rescores_installs_and_closes_a_phase(
    shared_dir: Path,
    page: Page,
    errors: list[str],
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
) -> None:
    seeded = seed(shared_dir / "service")
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
    with served(seeded.app) as url:
        _sign_in(page, url, seeded.tokens["olga"])
        page.goto(f"{url}/console")
        _shoot(page, "home")
        page.click("#challenges a")
        page.select_option("select[name=status]", "failed")
        page.select_option("select[name=failure]", "entry")
        page.fill("input[name=team]", "blue")
        page.click("#filters button")
        expect(page.locator("#submissions")).to_contain_text(failed)
        expect(page.locator("#submissions")).not_to_contain_text(scored)
        _shoot(page, "challenge")

        page.click(f"#submissions a:text-is('{failed}')")
        expect(page.locator("#status")).to_have_text("failed")
        expect(page.locator("table.cases")).to_contain_text(f"{EXAM_LOG} te01")
        expect(page.locator("section.task")).to_contain_text(SETUP_LOG)
        assert page.locator("table.cases pre").first.evaluate("e => e.tagName") == "PRE"
        _shoot(page, "record")
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
        _shoot(page, "flagged")

        page.goto(f"{url}/console/install")
        page.set_input_files("input[name=bundle]", str(_new_bundle(shared_dir / "v2")))
        page.click("#install button")
        expect(page.locator("#installed")).to_contain_text("version 3")
        _shoot(page, "install")

        page.goto(f"{url}/console/challenges/toy")
        page.click("#rescore button")
        expect(page.locator("#summary")).to_contain_text("1 changed")
        expect(page.locator("#score-diff")).to_contain_text(scored)
        _shoot(page, "rescored")

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
        _shoot(page, "users")

        page.context.clear_cookies()
        _sign_in(page, url, seeded.tokens["alice"])
        for path in ("/console", "/console/challenges/toy", f"/console/submissions/{scored}",
                     f"/console/submissions/{scored}/entry", "/console/users"):  # fmt: skip
            answer = page.goto(f"{url}{path}")
            assert answer is not None and answer.status == 404, path
    seeded.platform.close()
    assert errors == []
