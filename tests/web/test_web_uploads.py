"""Uploading from the browser (Debian's Chromium through playwright): a bare CSV, 200 MB.

A participant picks ``submission.csv`` in the challenge page's form, sees the upload's
progress (``static/upload.js``, no inline script: a CSP violation would fail the test),
lands on the submission's page, sees its score once the job ran, and the quota left on the
challenge page. A 200 MB upload goes through the same form. The challenge page and its form
are photographed at desktop and phone widths.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from browser_fixtures import Pages
from playwright.sync_api import expect
from service_seed import Seeded, run_queued, seed, served
from table_challenge import TEST, make_table_challenge

from proctor.sandbox.base import Sandbox
from proctor.services.platform import installs
from proctor.services.platform.accounts import authenticate
from proctor.settings import Settings
from proctor.store.models import SubmissionRow

pytestmark = [pytest.mark.slow]
BIG_BYTES = 200 * 1000 * 1000
RECORD_STATUS = """
document.addEventListener("DOMContentLoaded", () => {
  const status = document.getElementById("upload-status");
  if (!status) return;
  new MutationObserver(() => {
    const seen = JSON.parse(sessionStorage.getItem("seen") || "[]");
    seen.push(status.textContent);
    sessionStorage.setItem("seen", JSON.stringify(seen));
  }).observe(status, { childList: true, characterData: true, subtree: true });
});
"""
"""Records each text the upload's status shows (a test's own script, injected by playwright)."""
CSV = "id,target\n" + "".join(f"{k},{v}\n" for k, v in TEST.items())


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Seeded, str]]:
    folder = make_table_challenge(tmp_path / "tabular")
    spec = yaml.safe_load((folder / "challenge.yaml").read_text())
    spec["title"] = "Guess the animal"
    spec["protocol"] |= {"file_bytes": 256 * 1024**2, "upload_bytes": 256 * 1024**2}
    spec["phases"] = [{"name": "final", "tasks": ["main"], "quota": {"per_day": 7, "total": 23}}]
    spec["submission_fields"] = [
        {"name": "method", "label": "Method name", "public": True, "max_chars": 80},
        {"name": "code_url", "label": "Code", "kind": "url", "public": True},
        {"name": "description", "kind": "long_text", "description": "for the organizers"},
    ]
    (folder / "challenge.yaml").write_text(yaml.safe_dump(spec))
    seeded = seed(tmp_path / "service", upload_bytes=256 * 1024**2)
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    installs.install(seeded.platform, olga, str(folder))
    with served(seeded.app) as url:
        yield seeded, url
    seeded.platform.close()


def test_a_bare_csv_uploaded_in_the_browser_is_scored_and_the_quota_shrinks(
    site: tuple[Seeded, str],
    watched: Pages,
    tmp_path: Path,
    sandbox: Sandbox,
    sandbox_settings: Settings,
) -> None:
    seeded, url = site
    bare = tmp_path / "submission.csv"
    bare.write_text(CSV)
    page = watched.open(url, seeded.tokens["alice"])
    page.goto(f"{url}/challenges/tabular")
    expect(page.locator("#quota")).to_contain_text("7 left today, 23 left in the phase")
    watched.shoot(page, "challenge-upload-form")
    page.set_input_files("#submit-form input[name=entry]", str(bare))
    page.fill("#submit-form input[name='field.method']", "Gradient boosting <v2>")
    page.fill("#submit-form input[name='field.code_url']", "https://example.org/animals")
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(re.compile(r"/submissions/[0-9a-f]{16}$"))
    sid = page.url.rsplit("/", 1)[1]
    expect(page.locator("h1 code")).to_have_text(sid)  # the full id
    run_queued(seeded, sandbox, sandbox_settings)
    page.reload()
    expect(page.locator("body")).to_contain_text("f1_macro")
    expect(page.locator("body")).to_contain_text("scored")
    page.goto(f"{url}/challenges/tabular")
    expect(page.locator("#quota")).to_contain_text("6 left today, 22 left in the phase")
    expect(page.locator("#submissions")).to_contain_text(sid)
    watched.shoot(page, "challenge-after-upload")
    page.goto(f"{url}/challenges/tabular/leaderboards/default")
    expect(page.locator("#board")).to_contain_text("Gradient boosting <v2>")
    expect(page.locator("#board a[href='https://example.org/animals']")).to_have_count(1)
    watched.shoot(page, "board-submission-fields")


def test_a_wrongly_named_file_is_refused_in_the_page_with_the_fix(
    site: tuple[Seeded, str], watched: Pages, tmp_path: Path
) -> None:
    seeded, url = site
    wrong = tmp_path / "preds.csv"
    wrong.write_text(CSV)
    page = watched.open(url, seeded.tokens["alice"])
    page.goto(f"{url}/challenges/tabular")
    watched.expect_error(page, "status of 422")
    page.set_input_files("#submit-form input[name=entry]", str(wrong))
    page.click("#submit-form button[type=submit]")
    status = page.locator("#upload-status")
    expect(status).to_contain_text("preds.csv is not an archive")
    expect(status).to_contain_text("name your predictions submission.csv")
    assert page.url == f"{url}/challenges/tabular"


@pytest.mark.timeout(600)
def test_a_200_mb_upload_goes_through_the_form_with_its_progress(
    site: tuple[Seeded, str], watched: Pages, tmp_path: Path
) -> None:
    seeded, url = site
    big = tmp_path / "big.zip"
    with zipfile.ZipFile(big, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("test/main/submission.csv", CSV)
        with archive.open("README.md", "w", force_zip64=True) as readme:
            for _ in range(BIG_BYTES // 2**20 + 1):
                readme.write(os.urandom(2**19).hex().encode())
    assert big.stat().st_size > BIG_BYTES
    page = watched.open(url, seeded.tokens["alice"])
    page.add_init_script(RECORD_STATUS)
    page.goto(f"{url}/challenges/tabular")
    page.set_input_files("#submit-form input[name=entry]", str(big))
    page.click("#submit-form button[type=submit]")
    page.wait_for_url(re.compile(r"/submissions/[0-9a-f]{16}$"), timeout=300_000)
    seen = page.evaluate("JSON.parse(sessionStorage.getItem('seen') || '[]')")
    assert any(re.fullmatch(r"uploading: \d+% \([\d.]+ MiB of 19\d\.\d MiB\)", s) for s in seen), (
        seen
    )
    assert "uploaded; checking the entry…" in seen
    with seeded.platform.db() as session:
        row = session.query(SubmissionRow).one()
        assert seeded.platform.artifacts.path(row.upload_sha256).stat().st_size > BIG_BYTES
