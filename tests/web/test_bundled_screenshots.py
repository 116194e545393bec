"""The README's pictures: a bundled challenge's board and result page, as people see them.

Three teams submit to the bundled ``ehealthkd2019`` (three tasks, the official F1; no code
runs, so the host's ``/usr`` serves): its baseline, the baseline without its relations, and
empty annotations. The real service scores them; the board (one panel per task plus the mean
rank) and the baseline's result page are checked at 1,366 and 390 px (no sideways scroll, every
team's mark in each chart) and photographed into ``docs/screenshots/`` as
``bundled-board-*.png`` and ``bundled-submission-*.png``; the README shows two of them.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
import yaml
from browser_fixtures import PHONE, SCREENSHOTS, Pages, no_sideways_scroll
from paths import REPO
from playwright.sync_api import expect
from service_seed import Seeded, archive, run_queued

from proctor.challenges import bundled_root
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import add_user, authenticate
from proctor.settings import Settings

pytestmark = pytest.mark.sandbox

BUNDLED = bundled_root() / "ehealthkd2019"
TEAMS = {"alice": "amber", "bob": "blue", "carol": "cyan"}


def _challenge(root: Path) -> Path:
    """The bundled challenge as shipped, on the host's /usr (no code of an entry runs)."""
    shutil.copytree(BUNDLED, root, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    spec = yaml.safe_load((root / "challenge.yaml").read_text())
    spec["environment"] = "host"
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return root


def _entry(root: Path, emptied: tuple[str, ...]) -> Path:
    """The baseline's predictions, with the files named ``emptied`` (a, b) left empty."""
    shutil.copytree(BUNDLED / "baseline", root)
    for kind in emptied:
        for found in root.rglob(f"output_{kind}_scenario*.txt"):
            found.write_text("")
    return root


def test_the_bundled_board_and_result_page_read_on_a_desktop_and_a_phone(
    site: tuple[Seeded, str],
    watched: Pages,
    shared_dir: Path,
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
) -> None:
    seeded, url = site
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    name = installs.install(seeded.platform, olga, str(_challenge(shared_dir / "ehealthkd"))).name
    seeded.tokens["carol"] = add_user(seeded.platform, "carol", team="cyan").token
    entries = {"alice": (), "bob": ("b",), "carol": ("a", "b")}
    sids = {}
    for user, emptied in entries.items():
        upload = archive(_entry(shared_dir / f"entry-{user}", emptied))
        member = authenticate(seeded.platform, seeded.tokens[user])
        sids[user] = submissions.submit(
            seeded.platform, member, name, None, io.BytesIO(upload)
        ).submission
    run_queued(seeded, sandbox, sandbox_settings)

    page = watched.open(url, seeded.tokens["alice"])
    page.goto(f"{url}/challenges/{name}/leaderboards/default")
    for team in TEAMS.values():
        expect(page.locator("main").first).to_contain_text(team)
    charts = page.locator("svg[role=img]")
    expect(charts).not_to_have_count(0)
    for index in range(charts.count()):
        svg = str(charts.nth(index).inner_html())
        assert all(f"{team}:" in svg for team in TEAMS.values()), index
    watched.shoot(page, "bundled-board")

    page.goto(f"{url}/submissions/{sids['alice']}")
    expect(page.locator("#status")).to_have_text("scored")
    expect(page.locator("#scores")).to_contain_text("scenario3-taskB")
    watched.shoot(page, "bundled-submission")
    page.set_viewport_size(PHONE)
    no_sideways_scroll(page)
    for shot in ("bundled-board-desktop", "bundled-submission-desktop"):
        assert (SCREENSHOTS / f"{shot}.png").stat().st_size > 10_000
        assert f"screenshots/{shot}.png" in (REPO / "README.md").read_text()
