"""Fixtures of the browser tests: Debian's Chromium driven by playwright, on a served platform.

Loaded for every test module by ``tests/conftest.py``; a test asks for ``browser`` (one
Chromium per module, skipped with the reason when Debian's chromium is missing), ``site``
(the seeded toy platform, ``service_seed.seed``, served by uvicorn) and ``watched`` (pages
opened through it collect their console errors, a Content-Security-Policy violation among
them; the test fails on any one it did not expect; ``watched.shoot`` checks a page, valid
HTML5 and no sideways scroll on a phone, and photographs it). ``sign_in`` uses the login form
itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import html5lib
import pytest
from paths import REPO
from playwright.sync_api import Browser, ConsoleMessage, Page, Response, expect, sync_playwright
from service_seed import Seeded, seed, served

CHROMIUM = Path("/usr/bin/chromium")
# as root Chromium needs --no-sandbox; the others keep it off this machine's closed network
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 60_000
SCREENSHOTS = REPO / "docs" / "screenshots"
DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Chromium for one module (playwright's sync API keeps an event loop running in this
    thread meanwhile, which other modules' asyncio code must not meet)."""
    if not CHROMIUM.exists():
        pytest.skip(
            "Debian's chromium is not installed: `make test` installs it (apt-get install chromium)"
        )
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def site(shared_dir: Path) -> Iterator[tuple[Seeded, str]]:
    """The seeded toy platform served on 127.0.0.1, and its base URL."""
    seeded = seed(shared_dir / "service")
    with served(seeded.app) as url:
        yield seeded, url
    seeded.platform.close()


class Watched:
    """A browser page (own cookies) whose console errors are collected.

    ``expected`` holds patterns of errors the test provokes on purpose (the "failed to load"
    line Chromium logs for a page answered 404); any other error fails the test.
    """

    def __init__(self, browser: Browser, viewport: dict[str, int], *, downloads: bool) -> None:
        self.context = browser.new_context(viewport=viewport, accept_downloads=downloads)  # type: ignore[arg-type]
        self.page = self.context.new_page()
        self.page.set_default_timeout(WAIT_MS)
        self.errors: list[str] = []
        self.expected: list[re.Pattern[str]] = []
        self.document: Response | None = None
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("response", self._response)

    def _response(self, response: Response) -> None:
        if response.request.resource_type == "document" and response.frame == self.page.main_frame:
            self.document = response

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"{message.text} at {message.location}")

    def unexpected(self) -> list[str]:
        """The errors no pattern of ``expected`` matches."""
        return [e for e in self.errors if not any(p.search(e) for p in self.expected)]


class Pages:
    """Opens watched pages; ``open`` signs the page in when given a token."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.opened: list[Watched] = []

    def open(
        self,
        url: str,
        token: str | None = None,
        viewport: dict[str, int] = DESKTOP,
        *,
        downloads: bool = False,
    ) -> Page:
        """A new page (its own browser context) at ``url``, signed in with ``token``."""
        each = Watched(self.browser, viewport, downloads=downloads)
        self.opened.append(each)
        if token is not None:
            sign_in(each.page, url, token)
        return each.page

    def expect_error(self, page: Page, pattern: str) -> None:
        """Let ``page`` log console errors matching ``pattern`` (provoked by the test)."""
        self._watched(page).expected.append(re.compile(pattern))

    def _watched(self, page: Page) -> Watched:
        return next(each for each in self.opened if each.page is page)

    def valid_html(self, page: Page) -> None:
        """The page as the server sent it (the last document it loaded, a form's answer too)
        parses as HTML5 without one parse error (strict)."""
        document = self._watched(page).document
        assert document is not None, f"{page.url}: no document loaded"
        html5lib.HTMLParser(strict=True).parse(document.text())

    def shoot(self, page: Page, name: str) -> None:
        """Check the page (valid HTML5; on a phone, no sideways scroll) and photograph it at
        1,366 and 390 px into ``docs/screenshots/NAME-desktop.png`` and ``NAME-phone.png``."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.valid_html(page)
        before = page.viewport_size
        for label, viewport in VIEWPORTS.items():
            page.set_viewport_size(viewport)
            if label == "phone":
                no_sideways_scroll(page)
            page.screenshot(path=str(SCREENSHOTS / f"{name}-{label}.png"), full_page=True)
        page.set_viewport_size(before or DESKTOP)

    def close(self) -> None:
        """Close every page; fail on an unexpected console error of any."""
        found = {each.page.url: each.unexpected() for each in self.opened}
        for each in self.opened:
            each.context.close()
        assert not any(found.values()), f"console errors: {found}"


@pytest.fixture
def watched(browser: Browser) -> Iterator[Pages]:
    pages = Pages(browser)
    yield pages
    pages.close()


def sign_in(page: Page, url: str, token: str) -> None:
    """Sign in through the login form (its own button: the header's is "sign out")."""
    page.goto(f"{url}/login")
    page.fill("#token-login input[name=token]", token)
    page.click("#token-login button[type=submit]")
    expect(page.locator("#me")).to_be_visible()


WIDEST = """[...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > document.documentElement.scrollWidth - 20)
  .slice(0, 2).map(e => e.tagName + '#' + e.id + ' in ' + e.parentElement.className)"""


def no_sideways_scroll(page: Page) -> None:
    """The page is no wider than its viewport (tables scroll inside their box)."""
    width = page.evaluate("document.documentElement.scrollWidth")
    viewport = page.viewport_size
    assert viewport is not None
    wide = page.evaluate(WIDEST)
    assert width <= viewport["width"], f"{page.url} scrolls sideways: {width} px wide ({wide})"
