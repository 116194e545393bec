"""The README's pictures: a bundled challenge's board and result page, as people see them.

Three teams submit to the bundled ``ehealthkd2019`` (three tasks, the official F1; no code
runs, so the host's ``/usr`` serves): its baseline, the baseline without its relations, and
empty annotations. The real service scores them; the board (one panel per task plus the mean
rank) and the baseline's result page are checked at 1,366 and 390 px (no sideways scroll, every
team's mark in each chart) and photographed into ``docs/screenshots/`` as
``bundled-board-*.png`` and ``bundled-submission-*.png``; the README shows two of them.

Its F1 is not a mean over cases, so that board draws no interval. The bundled
``visceral-anatomy3`` (its CT task on the host's ``/usr``) does on its per-organ boards: three
teams answer every test volume with a training volume's masks (one mixes the two), publish
their liver, and the ``dice-liver`` board (best published Dice, a mean over volumes) shows each
team's bootstrap interval with its number of cases. As shipped the challenge discloses no
per-record score, so the intervals are the organizer's: that board as the organizer reads it
is photographed as ``bundled-intervals-*.png``.
"""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
import yaml
from browser_fixtures import PHONE, SCREENSHOTS, Pages, no_sideways_scroll
from paths import REPO
from playwright.sync_api import Page, expect
from service_seed import Seeded, archive, run_queued

from proctor.challenges import bundled_root
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform import installs, publications, submissions
from proctor.services.platform.accounts import add_user, authenticate
from proctor.settings import Settings

pytestmark = pytest.mark.sandbox

BUNDLED = bundled_root() / "ehealthkd2019"
AROUSAL = bundled_root() / "physionet2018"
TEAMS = {"alice": "amber", "bob": "blue", "carol": "cyan"}


def one_colour_per_team_and_axes_in_the_domain(page: Page) -> None:
    """Each team is drawn in one colour on every chart of the page; a score's axis (F1, Dice:
    declared in [0, 1]) stays inside [0, 1] (the mean rank's and the time axes aside)."""
    colours: dict[str, set[str]] = {team: set() for team in TEAMS.values()}
    for figure in page.locator("figure.chart").all():
        key = str(figure.get_attribute("id"))
        svg = str(figure.locator("svg[role=img]").inner_html())
        for team in TEAMS.values():
            found = re.findall(rf'class="plot-dot (plot-c\d)[^"]*"[^>]*><title>{team}:', svg)
            colours[team].update(found)
        ticks = re.findall(r'class="plot-tick"[^>]*>(-?[\d.]+)<', svg)
        if key != "chart-mean-rank":
            assert ticks and all(0.0 <= float(t) <= 1.0 for t in ticks), (key, ticks)
    assert all(len(found) == 1 for found in colours.values()), colours


def _challenge(root: Path, bundled: Path = BUNDLED) -> Path:
    """The bundled challenge as shipped, on the host's /usr (no code of an entry runs)."""
    shutil.copytree(bundled, root, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
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
    one_colour_per_team_and_axes_in_the_domain(page)
    watched.shoot(page, "bundled-board")

    page.goto(f"{url}/submissions/{sids['alice']}")
    expect(page.locator("#status")).to_have_text("scored")
    expect(page.locator("#scores")).to_contain_text("scenario3-taskB")
    expect(page.locator("#stages th")).to_have_text(["stage", "outcome"])  # no empty cases column
    watched.shoot(page, "bundled-submission")
    page.set_viewport_size(PHONE)
    no_sideways_scroll(page)
    for shot in ("bundled-board-desktop", "bundled-submission-desktop"):
        assert (SCREENSHOTS / f"{shot}.png").stat().st_size > 10_000
        assert f"screenshots/{shot}.png" in (REPO / "README.md").read_text()


VISCERAL = bundled_root() / "visceral_anatomy3"
EXECUTE_STANDARD = """#!/bin/sh
# execute_standard -i INPUT -o OUTDIR -r ID...: the kept mask of each asked organ it has
set -e
case=$(basename "$2" .nii.gz); out="$4"; here=$(dirname "$0")
masks="$here/masks"
if [ -f "$here/other" ] && [ "$case" = "$(cat "$here/other")" ]; then masks="$here/others"; fi
shift 5
for id in "$@"; do
  mask="$masks/$id.nii.gz"
  if [ -f "$mask" ]; then cp "$mask" "$out/${case}_${id}_test_1.nii.gz"; fi
done
"""
MASKS = {  # user: the training volume whose masks it copies, of which organs, and a test
    # volume it answers with the other training volume's
    "alice": ("10000101", ("58", "86", "29663", "29662", "1326", "1302", "237"), ""),
    "bob": ("10000100", ("58", "86", "29663", "29662", "1326", "1302"), ""),
    "carol": ("10000100", ("58", "1326"), "10000200_1_CTce_ThAb"),
}


def _visceral(root: Path) -> Path:
    """The bundled VISCERAL challenge, its CT task only, on the host's /usr."""
    shutil.copytree(VISCERAL / "data" / "CTce", root / "data" / "CTce")
    spec = yaml.safe_load((VISCERAL / "challenge.yaml").read_text())
    spec["environment"] = "host"
    spec["tasks"] = [task for task in spec["tasks"] if task["name"] == "CTce"]
    spec["phases"][0]["tasks"] = ["CTce"]
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return root


def _masks_entry(root: Path, volume: str, organs: tuple[str, ...], other: str) -> Path:
    """An entry answering each test volume (but ``other``) with a training volume's masks."""
    masks = VISCERAL / "data" / "CTce" / "training" / "segmentations"
    (root / "masks").mkdir(parents=True)
    for radlex in organs:
        shutil.copy(
            masks / f"{volume}_1_CTce_ThAb_{radlex}.nii.gz", root / "masks" / f"{radlex}.nii.gz"
        )
    if other:
        (root / "other").write_text(other)
        (root / "others").mkdir()
        second = next(v for v in ("10000100", "10000101") if v != volume)
        for radlex in organs:
            found = masks / f"{second}_1_CTce_ThAb_{radlex}.nii.gz"
            shutil.copy(found, root / "others" / f"{radlex}.nii.gz")
    (root / "execute_standard").write_text(EXECUTE_STANDARD)
    (root / "execute_standard").chmod(0o755)
    return root


def test_a_bundled_board_with_intervals_shows_each_with_its_number_of_cases(
    site: tuple[Seeded, str],
    watched: Pages,
    shared_dir: Path,
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
) -> None:
    seeded, url = site
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    root = _visceral(shared_dir / "visceral")
    name = installs.install(seeded.platform, olga, str(root)).name
    if "carol" not in seeded.tokens:
        seeded.tokens["carol"] = add_user(seeded.platform, "carol", team="cyan").token
    sids = {}
    for user, (volume, organs, other) in MASKS.items():
        upload = archive(_masks_entry(shared_dir / f"masks-{user}", volume, organs, other))
        member = authenticate(seeded.platform, seeded.tokens[user])
        sids[user] = submissions.submit(
            seeded.platform, member, name, None, io.BytesIO(upload)
        ).submission
    run_queued(seeded, sandbox, sandbox_settings)
    for user, sid in sids.items():
        member = authenticate(seeded.platform, seeded.tokens[user])
        publications.publish(seeded.platform, member, sid, "CTce", part="liver")

    page = watched.open(url, seeded.tokens["olga"])  # as shipped, intervals are the organizer's
    page.goto(f"{url}/challenges/{name}/leaderboards/dice-liver")
    records = sum(1 for _ in (root / "data" / "CTce" / "test").glob("*.nii.gz"))
    scores = page.locator("#board td.score")
    expect(scores).to_have_count(len(TEAMS))
    for index in range(len(TEAMS)):
        expect(scores.nth(index)).to_contain_text(f"n={records}")
    chart = page.locator("#chart-intervals svg[role=img]")
    expect(chart).to_have_count(1)
    svg = str(chart.inner_html())
    assert all(f"{team}:" in svg for team in TEAMS.values()), svg
    assert svg.count('<line class="plot-line') == len(TEAMS), svg  # each has width
    assert svg.count(f">n={records}</text>") == len(TEAMS), svg
    one_colour_per_team_and_axes_in_the_domain(page)
    watched.shoot(page, "bundled-intervals")
    assert (SCREENSHOTS / "bundled-intervals-desktop.png").stat().st_size > 10_000
    assert "screenshots/bundled-intervals-desktop.png" in (REPO / "README.md").read_text()
