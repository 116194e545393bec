"""The submit form when several phases are open: it asks, and a refusal says what to do.

The toy challenge installed again with two open phases; pages read over HTTP as alice, signed
in by the login form. No browser: ``upload.js`` keeps the form (and its chosen file) and shows
the refusal's ``.error`` text beside it, so that text must make sense on the page.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import httpx
import pytest
import yaml
from service_seed import Seeded, archive, seed, served
from toy_challenge import make_challenge, make_entry

from proctor.services.platform import installs
from proctor.services.platform.accounts import authenticate

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture
def two_phases(tmp_path: Path) -> Iterator[Seeded]:
    seeded = seed(tmp_path / "service")
    bundle = make_challenge(tmp_path / "again" / "toy")
    spec = yaml.safe_load((bundle / "challenge.yaml").read_text())
    spec["phases"] = [{"name": "practice", "tasks": ["arousal"]}, *spec["phases"]]
    (bundle / "challenge.yaml").write_text(yaml.safe_dump(spec))
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    installs.install(seeded.platform, olga, str(bundle))
    yield seeded
    seeded.platform.close()


def _signed_in(url: str, token: str) -> httpx.Client:
    browser = httpx.Client(base_url=url, timeout=60)
    form = CSRF.search(browser.get("/login").text)
    assert form
    assert browser.post("/login", data={"token": token, "csrf": form.group(1)}).status_code == 303
    return browser


def test_the_form_asks_for_the_phase_with_nothing_chosen(two_phases: Seeded) -> None:
    with served(two_phases.app) as url, closing(_signed_in(url, two_phases.tokens["alice"])) as b:
        page = b.get("/challenges/toy").text
    select = re.search(r'<select name="phase"[^>]*>.*?</select>', page, re.S)
    assert select, page
    assert "required" in select.group(0).split(">")[0]
    options = re.findall(r"<option[^>]*>", select.group(0))
    assert 'value=""' in options[0] and "disabled" in options[0]  # a prompt, not a phase
    assert all("selected" not in option for option in options[1:])
    assert {"practice", "final"} <= set(re.findall(r'<option value="(\w+)"', select.group(0)))


def test_a_submission_without_a_phase_is_refused_in_the_pages_words(
    two_phases: Seeded, tmp_path: Path
) -> None:
    entry = archive(make_entry(tmp_path / "entry"))
    with (
        served(two_phases.app) as url,
        closing(_signed_in(url, two_phases.tokens["alice"])) as browser,
    ):
        token = CSRF.search(browser.get("/challenges/toy").text)
        assert token
        answer = browser.post(
            "/challenges/toy/submit",
            data={"csrf": token.group(1)},
            files={"entry": ("entry.tar.gz", entry, "application/gzip")},
        )
    assert answer.status_code == 400
    said = re.search(r'class="error"[^>]*>(.*?)</p>', answer.text, re.S)
    assert said
    text = html.unescape(said.group(1))
    assert "--phase" not in text
    assert "practice" in text and "final" in text and "phase" in text
    assert 'href="/challenges/toy#submit-form"' in answer.text
