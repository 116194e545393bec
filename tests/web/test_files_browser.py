"""The Files page in Chromium: a participant downloads the starting kit, whose sha256 is the
one the page shows; anonymous visitors are told to sign in, and get 404 for a file; the page
is photographed at 1,366 and 390 px (docs/screenshots/files-*.png)."""

from __future__ import annotations

import hashlib
import tarfile
from pathlib import Path

import httpx
import pytest
import yaml
from browser_fixtures import Pages
from playwright.sync_api import expect
from service_seed import Seeded

from proctor.services.local.authoring import new_challenge
from proctor.services.platform import installs
from proctor.services.platform.accounts import authenticate


def _forecast(seeded: Seeded, root: Path) -> None:
    folder = root / "forecast12"
    new_challenge(folder, "predictions", name="forecast12")
    path = folder / "challenge.yaml"
    data = yaml.safe_load(path.read_text())
    data.pop("environment")
    data["title"] = "Forecast 12: predict tomorrow's values"
    (folder / "rules.md").write_text("# Rules\n\nOne account per person.\n")
    data["files"] = [{"path": "rules.md", "title": "The rules, as accepted at registration"}]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    installs.install(seeded.platform, olga, str(folder))


@pytest.mark.slow
def test_a_participant_downloads_the_kit_from_the_files_page(
    site: tuple[Seeded, str], watched: Pages, shared_dir: Path
) -> None:
    seeded, url = site
    _forecast(seeded, shared_dir / "organizer")
    page = watched.open(url, seeded.tokens["bob"], downloads=True)
    page.goto(f"{url}/challenges/forecast12")
    expect(page.locator("#kit-hint")).to_contain_text(f"proctor kit forecast12 KIT --server {url}")
    page.click("nav.challenge-nav >> text=Files")
    expect(page.locator("h1")).to_contain_text("Files")
    link = page.locator("a.file-name", has_text="forecast12-kit.tar.gz")
    shown = link.locator("xpath=ancestor::li").locator("code.hash").inner_text()
    with page.expect_download() as started:
        link.click()
    saved = shared_dir / "downloaded" / "forecast12-kit.tar.gz"
    started.value.save_as(saved)
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == shown
    with tarfile.open(saved) as kit:
        kit.extractall(shared_dir / "downloaded" / "kit", filter="data")  # audited (kit_audit)
    assert (shared_dir / "downloaded" / "kit" / "challenge" / "challenge.yaml").is_file()
    expect(page.locator("pre.command").first).to_contain_text("proctor run entry --challenge")
    watched.shoot(page, "files")
    anonymous = watched.open(url)
    anonymous.goto(f"{url}/challenges/forecast12/files")
    expect(anonymous.locator("#files-refused")).to_contain_text("sign in")
    assert httpx.get(f"{url}/challenges/forecast12/files/forecast12-kit.tar.gz").status_code == 404
