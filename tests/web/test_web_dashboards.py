"""VISCERAL's per-organ dashboard as a heat map (organ × metric), in Debian's Chromium.

Real submissions of the bundled ``visceral-anatomy3`` challenge (its CTce volumes, its
``visceral`` scorer; the entry copies organ masks of a training volume, so the scores are
real and differ per organ) run through the service's job function. The organizer's record
always shows the whole dashboard; the participant's submission page shows it only where the
phase discloses it (the score stage at ``full`` and the exam at ``counts`` or above): not at
``score: counts``, ``score: none`` or ``exam: none``. Both pages are photographed.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
import yaml
from browser_fixtures import Pages
from playwright.sync_api import Page, expect
from service_seed import Seeded, archive, run_queued

from proctor.challenges import bundled_root
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import authenticate
from proctor.settings import Settings

pytestmark = pytest.mark.sandbox

BUNDLED = bundled_root() / "visceral_anatomy3"
ORGANS = {"58": "liver", "86": "spleen", "29663": "kidney_left", "29662": "kidney_right"}
PHASES = {
    "final": None,  # the bundle's disclosure: exam counts, score full
    "score-counts": {"score": "counts"},
    "score-none": {"score": "none"},
    "exam-none": {"exam": "none"},
}
EXECUTE_STANDARD = """#!/bin/sh
# execute_standard -i INPUT -o OUTDIR -r ID...: the kept mask of each asked organ it has
set -e
case=$(basename "$2" .nii.gz); out="$4"; here=$(dirname "$0")
shift 5
for id in "$@"; do
  mask="$here/masks/$id.nii.gz"
  if [ -f "$mask" ]; then cp "$mask" "$out/${case}_${id}_test_1.nii.gz"; fi
done
"""


def _visceral(root: Path) -> Path:
    """The bundled challenge, its CTce task only, on the host's /usr, one phase per level."""
    shutil.copytree(BUNDLED / "data" / "CTce", root / "data" / "CTce")
    spec = yaml.safe_load((BUNDLED / "challenge.yaml").read_text())
    spec["environment"] = "host"
    spec["tasks"] = [task for task in spec["tasks"] if task["name"] == "CTce"]
    spec["phases"] = [
        {"name": name, "tasks": ["CTce"], **({"disclosure": d} if d else {})}
        for name, d in PHASES.items()
    ]
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return root


def _entry(root: Path) -> Path:
    """Masks of another training volume (same grid): four organs, imperfect on test volumes."""
    masks = BUNDLED / "data" / "CTce" / "training" / "segmentations"
    (root / "masks").mkdir(parents=True)
    for radlex in ORGANS:
        shutil.copy(masks / f"10000101_1_CTce_ThAb_{radlex}.nii.gz", root / "masks")
        (root / "masks" / f"10000101_1_CTce_ThAb_{radlex}.nii.gz").rename(
            root / "masks" / f"{radlex}.nii.gz"
        )
    (root / "execute_standard").write_text(EXECUTE_STANDARD)
    (root / "execute_standard").chmod(0o755)
    return root


def _heat_map(page: Page) -> str:
    """The dashboard chart's numbers as text (its table is the plot's text alternative)."""
    chart = page.locator("#chart-dashboard-CTce")
    expect(chart.locator("svg[role=img] rect")).not_to_have_count(0)
    return str(chart.locator("details table").text_content())


def test_the_organizer_always_sees_the_dashboard_and_a_team_only_where_disclosed(
    site: tuple[Seeded, str],
    watched: Pages,
    shared_dir: Path,
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
) -> None:
    seeded, url = site
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    name = installs.install(seeded.platform, olga, str(_visceral(shared_dir / "visceral"))).name
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    upload = archive(_entry(shared_dir / "entry"))
    sids = {
        phase: submissions.submit(
            seeded.platform, alice, name, phase, io.BytesIO(upload)
        ).submission
        for phase in PHASES
    }
    run_queued(seeded, sandbox, sandbox_settings)

    team = watched.open(url, seeded.tokens["alice"])
    team.goto(f"{url}/submissions/{sids['final']}")
    expect(team.locator("#status")).to_have_text("scored")
    shown = _heat_map(team)
    assert all(organ in shown for organ in ORGANS.values()), shown
    watched.shoot(team, "submission-visceral")
    for phase in ("score-counts", "score-none", "exam-none"):
        team.goto(f"{url}/submissions/{sids[phase]}")
        expect(team.locator("#stages")).to_contain_text("score")
        expect(team.locator("#chart-dashboard-CTce")).to_have_count(0)
        assert "plot-heat" not in team.content(), phase

    lower_better = team.locator(  # a distance: its smallest (the liver's) is the darkest
        "//*[local-name()='rect'][*[local-name()='title' and starts-with(., 'liver AVGDIST')]]"
    )
    team.goto(f"{url}/submissions/{sids['final']}")
    assert lower_better.get_attribute("class") == "plot-heat-4"

    organizer = watched.open(url, seeded.tokens["olga"])
    for phase, sid in sids.items():
        organizer.goto(f"{url}/console/submissions/{sid}")
        assert _heat_map(organizer) == shown, phase  # the same scorer's dashboard, undisclosed
    watched.shoot(organizer, "console-record-visceral")
