"""The image an entry ran in, on the organizer's record and on its team's submission page.

bob's toy entry brings ``image.tar`` (a slim image cut from the reference environment) and is
scored in it in the real sandbox; its run artifact then holds a ``Dockerfile`` and build log
as a built entry's does. In Chromium, the organizer's record shows the image's digest, base,
size and package counts, the long package lists collapsed, and downloads the ``Dockerfile``
and build log; bob's submission page shows his image's facts without those links; the files
answer 404 to him. Both pages are photographed at 1,366 px and 390 px (no sideways scroll).
The REST record, its file route and ``proctor logs`` give organizers the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from browser_fixtures import Pages
from image_entries import (
    BUILD_LOG,
    DOCKERFILE,
    install_image_toy,
    keep_build_files,
    submit_in_image,
)
from playwright.sync_api import expect
from service_seed import Seeded, run_queued, seed, served
from typer.testing import CliRunner

from proctor.cli.main import build_app
from proctor.environments.store import BuiltEnvironment
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform import records
from proctor.services.platform.accounts import authenticate
from proctor.settings import Settings

pytestmark = [pytest.mark.sandbox, pytest.mark.environment]


@pytest.fixture
def image_site(
    shared_dir: Path,
    reference_env: BuiltEnvironment,
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
) -> Iterator[tuple[Seeded, str, str]]:
    """The served platform, its URL, and bob's submission scored in its own image."""
    seeded = seed(shared_dir / "service", upload_bytes=64 * 2**20)
    install_image_toy(seeded, shared_dir / "bundle")
    sid = submit_in_image(seeded, "bob", shared_dir, reference_env)
    run_queued(seeded, sandbox, sandbox_settings, declared=True)
    keep_build_files(seeded, sid)
    with served(seeded.app) as url:
        yield seeded, url, sid
    seeded.platform.close()


@pytest.mark.timeout(600)
def test_organizers_and_the_team_see_the_image_an_entry_ran_in(
    image_site: tuple[Seeded, str, str], watched: Pages, shared_dir: Path
) -> None:
    seeded, url, sid = image_site
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    (task,) = records.submission_record(seeded.platform, olga, sid).tasks
    image = task.image
    assert image is not None and len(image.debian) > 12 and len(image.python) > 12

    page = watched.open(url, seeded.tokens["olga"], downloads=True)
    page.goto(f"{url}/console/submissions/{sid}")
    shown = page.locator(f"#image-{task.task}")
    expect(shown.locator("code.digest")).to_have_text(image.digest)
    expect(shown.locator("dd.base")).to_have_text("proctor/proctor-reference")
    expect(shown.locator("dd.size")).to_contain_text("MiB in")
    expect(shown.locator("dd.counts")).to_have_text(
        f"{len(image.debian)} Debian, {len(image.python)} Python"
    )
    debian = shown.locator("details.debian")
    expect(debian.locator("summary")).to_contain_text(f"{len(image.debian)} Debian packages")
    assert debian.get_attribute("open") is None  # a long list is collapsed
    expect(debian.locator("table")).not_to_be_visible()
    python = shown.locator("details.python")
    python.locator("summary").click()
    expect(python.locator("table")).to_contain_text("numpy")
    for name, text in (("Dockerfile", DOCKERFILE), ("build.log", BUILD_LOG)):
        with page.expect_download() as download:
            shown.locator(f"ul.image-files a:text-is('{name}')").click()
        saved = shared_dir / f"saved-{name}"
        download.value.save_as(saved)
        assert saved.read_text() == text
        assert download.value.suggested_filename == f"{sid}-{task.task}-{name}"
    watched.shoot(page, "console-record-entry-image")

    mine = watched.open(url, seeded.tokens["bob"])
    mine.goto(f"{url}/submissions/{sid}")
    own = mine.locator(f"#image-{task.task}")
    expect(own.locator("h2")).to_have_text("Your image")
    expect(own.locator("code.digest")).to_have_text(image.digest)
    expect(own.locator("dd.base")).to_have_text("proctor/proctor-reference")
    expect(own.locator("a")).to_have_count(0)  # no Dockerfile or build log links here
    watched.shoot(mine, "submission-entry-image")
    watched.expect_error(mine, "404 \\(Not Found\\)")
    for name in ("Dockerfile", "build.log", "entry-image.json"):
        answer = mine.goto(f"{url}/console/submissions/{sid}/tasks/{task.task}/image/{name}")
        assert answer is not None and answer.status == 404, name


def test_the_api_and_proctor_logs_give_the_image_to_organizers(
    image_site: tuple[Seeded, str, str],
) -> None:
    seeded, url, sid = image_site
    with httpx.Client(base_url=f"{url}/api/v1", headers=seeded.headers("olga")) as olga:
        (task,) = olga.get(f"/submissions/{sid}/record").raise_for_status().json()["tasks"]
        assert task["image"]["base"] == "proctor/proctor-reference"
        assert task["image_files"] == ["entry-image.json", "Dockerfile", "build.log"]
        name = task["task"]
        got = olga.get(f"/submissions/{sid}/tasks/{name}/image/Dockerfile").raise_for_status()
        assert got.text == DOCKERFILE and "attachment" in got.headers["content-disposition"]
        assert olga.get(f"/submissions/{sid}/tasks/{name}/image/image.tar").status_code == 404
    with httpx.Client(base_url=f"{url}/api/v1", headers=seeded.headers("bob")) as bob:
        assert bob.get(f"/submissions/{sid}/tasks/{name}/image/Dockerfile").status_code == 404
    options = ["--server", url, "--token", seeded.tokens["olga"]]
    done = CliRunner().invoke(build_app(), ["logs", sid, *options])
    assert done.exit_code == 0, done.output
    digest = task["image"]["digest"]
    debian, python = len(task["image"]["debian"]), len(task["image"]["python"])
    line = f"entry image {digest} on proctor/proctor-reference · 3."
    assert line in done.stdout, done.stdout
    assert f"MiB · {debian} Debian, {python} Python packages" in done.stdout
