"""The challenge page's submission form: what is left of the quota, and when it is shown.

The quota reads as what is left ("6 left today, 22 left in the phase"); with no phase open
the form is hidden, and a phase that has not opened yet says "opens at ...", not "closed".
A challenge that takes a bare prediction file names it beside the form.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from service_seed import Seeded, seed, served
from table_challenge import TEST, make_table_challenge

from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import authenticate
from proctor.services.platform.allowances import team_allowances

CSV = ("id,target\n" + "".join(f"{k},{v}\n" for k, v in TEST.items())).encode()


def tabular(root: Path, phases: list[dict[str, Any]]) -> Path:
    """The table challenge with these ``phases``."""
    folder = make_table_challenge(root / "tabular")
    spec = yaml.safe_load((folder / "challenge.yaml").read_text())
    spec["phases"] = phases
    (folder / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return folder


def _site(tmp_path: Path, phases: list[dict[str, Any]]) -> Iterator[tuple[Seeded, str]]:
    seeded = seed(tmp_path / "service")
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    installs.install(seeded.platform, olga, str(tabular(tmp_path, phases)))
    with served(seeded.app) as url:
        yield seeded, url
    seeded.platform.close()


def _page(seeded: Seeded, url: str) -> str:
    cookies = {"proctor_token": seeded.tokens["alice"]}
    answer = httpx.get(f"{url}/challenges/tabular", cookies=cookies, timeout=60)
    assert answer.status_code == 200, answer.text
    return answer.text


@pytest.fixture
def open_site(tmp_path: Path) -> Iterator[tuple[Seeded, str]]:
    quota = {"per_day": 7, "total": 23}
    yield from _site(tmp_path, [{"name": "final", "tasks": ["main"], "quota": quota}])


def test_the_quota_reads_as_what_is_left(open_site: tuple[Seeded, str]) -> None:
    seeded, url = open_site
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    submissions.submit(seeded.platform, alice, "tabular", None, io.BytesIO(CSV), "submission.csv")
    (left,) = team_allowances(seeded.platform, alice, "tabular")
    assert (left.left_today, left.left_in_phase) == (6, 22)
    page = _page(seeded, url)
    assert "6 left today, 22 left in the phase" in page
    assert 'id="submit-form"' in page
    assert "the file <code>submission.csv</code> (or a .zip holding it)" in page
    assert '<script src="/static/upload.js" defer></script>' in page


def test_a_phase_not_yet_open_says_when_it_opens_and_hides_the_form(tmp_path: Path) -> None:
    opens = (datetime.now(UTC) + timedelta(days=3)).replace(microsecond=0)
    phases = [{"name": "final", "tasks": ["main"], "opens": opens.isoformat()}]
    for seeded, url in _site(tmp_path, phases):
        page = _page(seeded, url)
        when = opens.strftime("%Y-%m-%d %H:%M UTC")
        assert f"opens at {when}" in page
        assert ">closed<" not in page
        assert 'id="submit-form"' not in page
        assert f"No phase takes submissions now: phase final opens at {when}." in page
        home = httpx.get(f"{url}/", timeout=60).text
        assert f"opens at {when}" in home


def test_a_closed_phase_hides_the_form(tmp_path: Path) -> None:
    closed = (datetime.now(UTC) - timedelta(days=1)).replace(microsecond=0)
    phases = [{"name": "final", "tasks": ["main"], "closes": closed.isoformat()}]
    for seeded, url in _site(tmp_path, phases):
        page = _page(seeded, url)
        assert ">closed<" in page
        assert 'id="submit-form"' not in page
        assert "No phase takes submissions now." in page
