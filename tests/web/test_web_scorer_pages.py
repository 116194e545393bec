"""A scoring program's ``detailed_results.html`` on the submission's page, in Debian's Chromium.

A real scoring program (``tests/support/program_challenge.py``, run in its own sandbox) writes a
hostile page: a script reaching for the page around it, a form posting to Proctor, a
``javascript:`` link, an image fetched from Proctor, beside a ``data:`` image. The team sees it
framed on its submission's page in a phase that discloses the score stage at ``full`` with
``per_record: full``, and the page stays harmless: its own address, CSP ``sandbox`` (no script,
no form, nothing fetched), ``nosniff``; the page around it keeps its strict CSP and logs no
error of its own. In a phase with ``per_record: rounded`` the team sees no frame and the
address is "not found", as for another team; the organizer's record frames it always. A page
too large to show is answered with a short notice instead (HTTP level).
"""

from __future__ import annotations

import base64
import io
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_fixtures import Pages
from playwright.sync_api import expect
from program_challenge import SCORE_PY, make_challenge, make_entry
from service_boards_fixtures import Svc, start
from service_seed import Seeded, archive, run_queued

from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import authenticate
from proctor.services.platform.resources import Platform
from proctor.settings import Settings

PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201a5d5c4e4000000"
        "0049454e44ae426082"
    )
).decode()
HOSTILE = f"""<!doctype html><html><head><title>detailed</title>
<style>body {{ background: #fdf6e3; }}</style></head><body>
<h1 id="heading">Detailed results: <b>mae</b></h1>
<img id="inline" alt="a plot" src="data:image/png;base64,{PIXEL}">
<img id="fetched" alt="from Proctor" src="/static/favicon.svg">
<script>parent.document.title = "PWNED"; document.body.append("ran-script");</script>
<form id="steal" method="post" action="/logout"><button id="go">go</button></form>
<a id="js" href="javascript:parent.document.body.replaceChildren()">click</a>
</body></html>"""
SCORE_WITH_PAGE = (
    SCORE_PY
    + f"""
pathlib.Path(os.environ["PROCTOR_SCORES_DIR"], "detailed_results.html").write_text({HOSTILE!r})
"""
)

pytestmark = pytest.mark.sandbox


def test_a_hostile_detailed_page_is_framed_harmless_only_where_disclosed(
    site: tuple[Seeded, str],
    watched: Pages,
    shared_dir: Path,
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
) -> None:
    seeded, url = site
    folder = make_challenge(shared_dir / "mae", score_py=SCORE_WITH_PAGE)
    spec = folder / "challenge.yaml"
    spec.write_text(
        spec.read_text().replace(
            "phases:\n- name: final\n  tasks:\n  - mae\n",
            "phases:\n- name: final\n  tasks: [mae]\n- name: rounded\n  tasks: [mae]\n"
            "  disclosure: {per_record: rounded}\n",
        )
    )
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    name = installs.install(seeded.platform, olga, str(folder)).name
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    upload = archive(make_entry(shared_dir / "entry"))
    shown, hidden = (
        submissions.submit(seeded.platform, alice, name, phase, io.BytesIO(upload)).submission
        for phase in ("final", "rounded")
    )
    run_queued(seeded, sandbox, sandbox_settings)

    page = watched.open(url, seeded.tokens["alice"])
    watched.expect_error(page, "/detailed/mae")  # what the sandbox refused, logged in the frame
    page.goto(f"{url}/submissions/{shown}")
    expect(page.locator("#status")).to_have_text("scored")
    frame_element = page.locator("iframe#detailed-mae")
    assert frame_element.get_attribute("sandbox") == ""
    frame = page.frame_locator("iframe#detailed-mae")
    expect(frame.locator("#heading")).to_have_text("Detailed results: mae")
    assert frame.locator("#inline").evaluate("e => e.naturalWidth") == 1  # a data: image shows
    assert frame.locator("#fetched").evaluate("e => e.naturalWidth") == 0  # nothing fetched
    expect(frame.locator("body")).not_to_contain_text("ran-script")
    frame.locator("#go").click()  # a sandboxed form is not sent: still signed in
    frame.locator("#js").click()  # no script runs from a javascript: link
    expect(page.locator("#me")).to_have_text("alice")
    expect(page.locator("#status")).to_have_text("scored")
    assert "PWNED" not in page.title()
    answer = page.request.get(f"{url}/submissions/{shown}/detailed/mae")
    policy = answer.headers["content-security-policy"]
    assert answer.status == 200 and policy.startswith("sandbox;") and "script-src" not in policy
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["x-frame-options"] == "SAMEORIGIN"
    assert "frame-src 'self'" in page.request.get(page.url).headers["content-security-policy"]
    watched.shoot(page, "submission-detailed")

    page.goto(f"{url}/submissions/{hidden}")  # per_record: rounded
    expect(page.locator("#scores")).to_contain_text("mae")
    expect(page.locator("iframe")).to_have_count(0)
    assert page.request.get(f"{url}/submissions/{hidden}/detailed/mae").status == 404
    other = watched.open(url, seeded.tokens["bob"])
    assert other.request.get(f"{url}/submissions/{shown}/detailed/mae").status == 404

    organizer = watched.open(url, seeded.tokens["olga"])
    watched.expect_error(organizer, "/detailed/mae")
    organizer.goto(f"{url}/console/submissions/{hidden}")
    organizer_frame = organizer.frame_locator("iframe#detailed-mae")
    expect(organizer_frame.locator("#heading")).to_have_text("Detailed results: mae")


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Svc]:
    service = start(f"sqlite:///{tmp_path / 'service.db'}", tmp_path)
    yield service
    service.client.close()
    Platform.close(service.platform)


def test_a_page_too_large_to_show_is_a_notice_and_a_team_below_full_gets_404(svc: Svc) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        huge = b"<p>" + b"x" * (5 * 1024**2) + b"</p>"
        info = tarfile.TarInfo("detailed_results-arousal.html")
        info.size = len(huge)
        tar.addfile(info, io.BytesIO(huge))
    buffer.seek(0)
    artifact = svc.platform.artifacts.put_stream(buffer)
    svc.scored("b1", "blue", "plain", {"auprc": 0.5, "auroc": 0.5}, run_artifact=artifact)
    path = "/submissions/b1/detailed/arousal"
    svc.client.cookies.set("proctor_token", svc.tokens["olga"])
    organizer = svc.client.get(path)
    assert organizer.status_code == 200 and "more than the 4,194,304 shown" in organizer.text
    assert len(organizer.content) < 1000
    assert organizer.headers["content-security-policy"].startswith("sandbox;")
    svc.client.cookies.set("proctor_token", svc.tokens["bob"])
    team = svc.client.get(path)
    assert team.status_code == 404  # phase "plain": per_record none
    assert "x" * 100 not in team.text
