"""A newcomer's first day on a served challenge, in Debian's Chromium (issue 26, "What it must
show"), on a ``challenge new --protocol predictions`` challenge and on an imported Codabench
bundle with public data.

A real ``proctor serve`` with a worker, ``PROCTOR_SIGNUP=approval``, a real SMTP server on
127.0.0.1 and ``PROCTOR_PUBLIC_URL`` set to ``http://localhost:PORT`` while the browser of
the first participant uses ``http://127.0.0.1:PORT``: so a link that names the server shows
which base it took. The journey:

1. ada signs up and opens the verification link from the mail; the organizer approves the
   account in the console;
2. ada registers on the challenge and accepts its terms; the organizer approves her in the
   console (she is told by mail);
3. ada creates a team; eve opens its invitation link signed out, signs in, lands back on the
   join page and joins (on the predictions run eve has no account yet: she makes one from
   the invitation page, confirms it from the mail, is approved, signs in and lands back);
4. ada downloads the kit from the Files page and with ``proctor kit NAME DEST --server URL
   --token T`` (a token made on her account page): both match the sha256 the page lists;
5. ``proctor run entry --challenge challenge`` in the kit (as its README says) scores on the
   stand-in;
6. she uploads the kit's entry through the browser (the bare ``predictions.csv``; the
   Codabench challenge takes a zip) and sees the score and what is left of the quota;
7. she receives the "finished" mail.

Both challenges run in the ``host`` environment: exporting a built environment's image for
the Files page (over a GiB) is ``test_files_e2e``'s part, and would take minutes here. The
scaffolded scoring program is therefore rewritten without numpy and pandas (same scores).
Pages no other browser test shows are photographed at 1,366 and 390 px
(``docs/screenshots/journey-*.png``). The module also tests the sign-in's ``next`` against
open redirects.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

import httpx
import pytest
import yaml
from browser_fixtures import Pages
from bundle_fixtures import V2_YAML, make_v2_bundle, submission_zip
from playwright.sync_api import Page, expect
from served_host import ServedHost
from service_seed import Seeded
from smtp_fixtures import Mailbox, free_port

PASSWORD = "a long and secret phrase"
SCORED_MS = 240_000  # a loaded 2-core machine: the worker's sandbox runs may queue
MAIL_S = 120.0

SCORE_PY = '''\
"""Score predictions.csv (id,target) against labels.csv: MAE and share within 1 (stdlib)."""
import csv
import json
import os
from pathlib import Path


def column(path):
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["id"]: float(row["target"]) for row in csv.DictReader(handle)}


reference = Path(os.environ["PROCTOR_REFERENCE"])
outputs = Path(os.environ["PROCTOR_OUTPUTS"])
rows, errors = {}, []
for case in Path(os.environ["PROCTOR_CASES_FILE"]).read_text().split():
    truth = column(reference / case / "labels.csv")
    guess = column(outputs / case / "predictions.csv")
    mine = [abs(guess.get(key, 0.0) - value) for key, value in truth.items()]
    errors += mine
    rows[case] = {"mae": sum(mine) / len(mine), "within_1": sum(e <= 1 for e in mine) / len(mine)}
scores = {"mae": sum(errors) / len(errors), "within_1": sum(e <= 1 for e in errors) / len(errors),
          "cases": rows}
Path(os.environ["PROCTOR_SCORES_DIR"], "scores.json").write_text(json.dumps(scores))
'''


@dataclass(frozen=True)
class Journey:
    """One challenge the journey runs on: how the organizer makes it, what ada uploads."""

    name: str
    make: Callable[[ServedHost, Path], Path]
    upload: Callable[[Path, Path], Path]  # (the unpacked kit, a scratch folder) -> the file
    quota_left: str
    metric: str


def _forecast(host: ServedHost, root: Path) -> Path:
    """``challenge new --protocol predictions`` with registration, terms and a quota."""
    folder = root / "forecast"
    made = host.cli("challenge", "new", str(folder), "--protocol", "predictions")
    assert made.returncode == 0, made.stderr
    spec = yaml.safe_load((folder / "challenge.yaml").read_text())
    spec["environment"] = "host"
    spec["registration"] = {"mode": "approval", "terms": "pages/terms.md", "team_size": 2}
    spec["phases"][0]["quota"] = {"per_day": 5, "total": 20}
    (folder / "challenge.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    (folder / "pages").mkdir()
    (folder / "pages/terms.md").write_text("# Terms\n\nShare no hidden data.\n")
    (folder / "scoring/score.py").write_text(SCORE_PY)
    return folder


def _labels(host: ServedHost, root: Path) -> Path:
    """A Codabench bundle with public data, imported: its sample is the kit's stand-in."""
    phase = "    tasks: [0, 1]\n  - index: 1"
    terms = "terms: pages/terms.md\n"
    text = (
        V2_YAML.replace("end: 2021-06-30", "end: 2099-06-30")  # the development phase is open
        .replace("start: 2021-07-01 00:00:00", "start: 2099-07-01 00:00:00")
        .replace(phase, phase.replace("\n", "\n    public_data: sample\n", 1))
        .replace(terms, terms + "registration_auto_approve: false\n")
    )
    bundle = make_v2_bundle(root / "bundle", yaml_text=text)
    (bundle / "sample").mkdir()
    (bundle / "sample/truth.txt").write_text("b\nb\nb\na\na\na\n")  # made up, not the hidden
    folder = root / "labels"
    imported = host.cli("challenge", "import", str(bundle), str(folder), "--environment", "host")
    assert imported.returncode == 0, imported.stderr
    return folder


def _bare_predictions(kit: Path, scratch: Path) -> Path:
    return kit / "entry" / "test" / "values" / "predictions.csv"


def _codabench_zip(kit: Path, scratch: Path) -> Path:
    return submission_zip(scratch, (kit / "entry" / "predictions.txt").read_text())


JOURNEYS = [
    pytest.param(
        Journey("forecast", _forecast, _bare_predictions, "4 left today, 19 left in the phase",
                "mae"),
        id="predictions",
    ),
    pytest.param(
        Journey("toy-labels-challenge", _labels, _codabench_zip,
                "4 left today, 99 left in the phase", "accuracy"),
        id="codabench",
    ),
]  # fmt: skip


@dataclass
class Served:
    """The served platform: its host (CLI, organizer's token), browser and public bases."""

    host: ServedHost
    url: str  # as ada's browser and the organizer reach it
    public: str  # PROCTOR_PUBLIC_URL, the same server under another name


@pytest.fixture
def served(shared_dir: Path, mailbox: Mailbox) -> Iterator[Served]:
    port = free_port()
    public = f"http://localhost:{port}"
    env = dict(
        os.environ,
        PROCTOR_DATA=str(shared_dir / "data"),
        PROCTOR_WORK_ROOT=str(shared_dir / "work"),
        PROCTOR_ALLOW_HOST_ENVIRONMENT="1",
        PROCTOR_SIGNUP="approval",
        PROCTOR_SMTP_URL=mailbox.url,
        PROCTOR_MAIL_FROM="proctor@example.org",
        PROCTOR_PUBLIC_URL=public,
        PYTHONPATH=os.pathsep.join(sys.path),
    )
    for name in ("PROCTOR_DATABASE_URL", "PROCTOR_TOKEN", "PROCTOR_SERVER"):
        env.pop(name, None)
    host = ServedHost(env, shared_dir / "work")
    host.add_users()
    host.serve(workers=1, port=port)
    try:
        yield Served(host, host.env["PROCTOR_SERVER"].rstrip("/"), public)
    finally:
        host.stop()


def mail_about(mailbox: Mailbox, address: str, words: str) -> EmailMessage:
    """The first mail to ``address`` whose subject holds ``words``, waiting for it."""
    deadline = time.monotonic() + MAIL_S
    with mailbox.changed:
        while True:
            found = [m for m in mailbox.to(address) if words in str(m["Subject"])]
            if found:
                return found[0]
            left = deadline - time.monotonic()
            assert left > 0, f"no mail about {words!r} to {address}: {mailbox.to(address)}"
            mailbox.changed.wait(left)


def shoot(
    watched: Pages, journey: Journey, page: Page, name: str, *, codabench: bool = False
) -> None:
    """Photograph a page of one journey (``watched.shoot``: checked, at 1,366 and 390 px)."""
    if (journey.name != "forecast") == codabench:
        watched.shoot(page, name)


def sign_up(page: Page, base: str, name: str, mailbox: Mailbox, served: Served) -> str:
    """Sign up as ``name`` through the form shown and confirm through the mailed link at
    ``base``; the link."""
    page.fill("#signup input[name=name]", name)
    page.fill("#signup input[name=email]", f"{name}@example.org")
    page.fill("#signup input[name=password]", PASSWORD)
    page.click("#signup button[type=submit]")
    expect(page.locator("#mail-sent")).to_be_visible()
    link = mailbox.link(mail_about(mailbox, f"{name}@example.org", "onfirm"), "/signup/verify")
    assert link.startswith(f"{served.public}/signup/verify?"), link
    page.goto(link.replace(served.public, base))
    page.click("#confirm button[type=submit]")
    expect(page.locator("#note")).to_contain_text("An organizer approves new accounts")
    return link


def approve_account(olga: Page, url: str, name: str) -> None:
    """The organizer approves ``name``'s account in the console."""
    olga.goto(f"{url}/console/accounts")
    olga.click(f"#pending button:has-text('approve {name}')")
    expect(olga.locator("#decided")).to_be_visible()


def sign_in_with_password(page: Page, name: str) -> None:
    """Fill and send the password form of the sign-in page shown."""
    page.fill("#password-login input[name=login]", name)
    page.fill("#password-login input[name=password]", PASSWORD)
    page.click("#password-login button[type=submit]")


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("journey", JOURNEYS)
def test_a_newcomer_joins_gets_the_kit_replicates_and_submits(
    journey: Journey, served: Served, mailbox: Mailbox, watched: Pages, shared_dir: Path
) -> None:
    host, url, public, name = served.host, served.url, served.public, journey.name
    folder = journey.make(host, shared_dir / "organizer")
    added = host.cli("challenge", "add", str(folder), user="olga")
    assert added.returncode == 0, added.stderr

    # 1. a newcomer signs up and confirms; the organizer approves the account (on the
    # Codabench run, eve makes hers now too; on the other, from the invitation: step 3)
    ada = watched.open(url, downloads=True)
    ada.goto(f"{url}/signup")
    sign_up(ada, url, "ada", mailbox, served)
    olga = watched.open(url, host.tokens["olga"])
    approve_account(olga, url, "ada")
    assert "approved" in str(mail_about(mailbox, "ada@example.org", "approved")["Subject"])
    eve = watched.open(public)
    eve_has_account = journey.name != "forecast"
    if eve_has_account:
        eve.goto(f"{public}/signup")
        sign_up(eve, public, "eve", mailbox, served)
        approve_account(olga, url, "eve")

    # 2. ada registers and accepts the terms; the organizer approves her registration
    ada.goto(f"{url}/challenges/{name}")
    ada.click("#sign-in-header")
    sign_in_with_password(ada, "ada")
    expect(ada.locator("#me")).to_have_text("ada")
    assert ada.url == f"{url}/challenges/{name}"  # back where she was
    ada.click("#register-link")
    expect(ada.locator("#terms")).to_contain_text("Terms")
    ada.check("#register input[name=accept]")
    ada.click("#register button[type=submit]")
    expect(ada.locator("#registration-state")).to_contain_text("waits for an organizer")
    olga.goto(f"{url}/console")
    olga.click(f"#registrations-{name}")
    olga.click("#registration-ada button[aria-label='approve ada']")
    expect(olga.locator("#registration-ada")).to_contain_text("approved")
    mail_about(mailbox, "ada@example.org", f"take part in {name}")  # told by mail

    # 3. ada makes a team; eve opens the invitation signed out, signs in (or first makes an
    # account, which waits for the organizer), lands back on it and joins
    ada.goto(f"{url}/challenges/{name}")
    expect(ada.locator("#registration-state")).to_contain_text("You are registered")
    ada.click("#team-link")
    ada.fill("#create-team input[name=team]", f"{name}-team")
    ada.click("#create-team button[type=submit]")
    ada.click("#invite button[type=submit]")
    invitation = ada.locator("#invite-link").get_attribute("href")
    assert invitation is not None and invitation.startswith(f"{public}/teams/join/"), invitation
    eve.goto(invitation)
    expect(eve.locator("#join-sign-up")).to_be_visible()  # for one who has no account yet
    shoot(watched, journey, eve, "journey-join-signed-out")
    if eve_has_account:
        eve.click("#join-sign-in")
    else:
        eve.click("#join-sign-up")
        link = sign_up(eve, public, "eve", mailbox, served)  # the link carries `next`
        assert "&next=%2Fteams%2Fjoin%2F" in link, link
        approve_account(olga, url, "eve")
    sign_in_with_password(eve, "eve")
    expect(eve.locator("h1")).to_have_text(f"Join team {name}-team")
    assert eve.url == invitation
    eve.click("#join button[type=submit]")
    expect(eve.locator("#members")).to_contain_text("ada")
    expect(eve.locator("#members")).to_contain_text("eve")

    # 4. the kit from the Files page and from `proctor kit --server` (a token of hers)
    ada.goto(f"{url}/challenges/{name}")
    expect(ada.locator("#kit-hint")).to_contain_text(f"--server {public}")
    ada.click("nav.challenge-nav >> text=Files")
    shoot(watched, journey, ada, "journey-files-imported", codabench=True)
    kit_name = f"{name}-kit.tar.gz"
    link = ada.locator("a.file-name", has_text=kit_name)
    listed = link.locator("xpath=ancestor::li").locator("code.hash").inner_text().strip()
    with ada.expect_download() as started:
        link.click()
    browser_copy = shared_dir / "browser" / kit_name
    started.value.save_as(browser_copy)
    assert hashlib.sha256(browser_copy.read_bytes()).hexdigest() == listed
    ada.goto(f"{url}/account")
    ada.click("#make-token button[type=submit]")
    token = ada.locator("#token").inner_text().strip()
    expect(ada.locator("main")).to_contain_text(f"export PROCTOR_SERVER={public}")
    kit = shared_dir / "participant" / "kit"
    fetched = host.cli("kit", name, str(kit), "--server", public, "--token", token, "--json")
    assert fetched.returncode == 0, fetched.stderr
    assert json.loads(fetched.stdout)["sha256"] == listed
    with tarfile.open(browser_copy) as packed:
        assert sorted({Path(n).parts[0] for n in packed.getnames()}) == sorted(
            p.name for p in kit.iterdir()
        )

    # 5. the kit's replica scores on the stand-in, run as its README says
    command = "proctor run entry --challenge challenge"
    assert command in (kit / "README.md").read_text()
    run = host.cli("run", str(kit / "entry"), "--challenge", str(kit / "challenge"), "--json")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert report["status"] == "scored" and report["scores"], report

    # 6. the upload through the browser: the score, and what is left of the quota
    upload = journey.upload(kit, shared_dir / "upload")
    ada.goto(f"{url}/challenges/{name}")
    ada.set_input_files("#submit-form input[name=entry]", str(upload))
    ada.click("#submit-form button[type=submit]")
    ada.wait_for_url(re.compile(r"/submissions/"))
    submission = ada.url.rsplit("/", 1)[-1]
    expect(ada.locator("#scores")).to_be_visible(timeout=SCORED_MS)
    expect(ada.locator("#status")).to_have_text("scored")
    expect(ada.locator("#scores")).to_contain_text(journey.metric)
    shoot(watched, journey, ada, "journey-submission-bare-file")
    ada.goto(f"{url}/challenges/{name}")
    expect(ada.locator("#quota")).to_contain_text(journey.quota_left)

    # 7. the "finished" mail, linking the submission under the public address
    told = mail_about(mailbox, "ada@example.org", "submission scored")
    assert f"{public}/submissions/{submission}" in Mailbox.body(told)


@pytest.mark.parametrize(
    "next_page",
    [
        "https://evil.example/",
        "//evil.example/x",
        "/\\evil.example",
        "/\r\nLocation: https://evil.example",
        "http:/evil.example",
        "javascript:alert(1)",
        " /team",
    ],
)
def test_signing_in_never_goes_to_another_site(site: tuple[Seeded, str], next_page: str) -> None:
    seeded, url = site
    with httpx.Client(base_url=url, timeout=60) as client:
        for page in ("/login", "/signup"):
            shown = client.get(page, params={"next": next_page}).text
            assert 'name="next"' not in shown and "evil" not in shown
        form = client.get("/login", params={"next": next_page})
        csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
        assert csrf is not None
        answer = client.post(
            "/login", data={"csrf": csrf.group(1), "token": seeded.tokens["bob"], "next": next_page}
        )
    assert answer.status_code == 303 and answer.headers["location"] == "/"


def test_a_page_that_needs_signing_in_comes_back_to_it_after(site: tuple[Seeded, str]) -> None:
    seeded, url = site
    with httpx.Client(base_url=url, timeout=60) as client:
        refused = client.get("/team")
        assert refused.status_code == 401
        assert 'href="/login?next=%2Fteam"' in refused.text
        form = client.get("/login", params={"next": "/team"})
        assert '<input type="hidden" name="next" value="/team">' in form.text
        csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
        assert csrf is not None
        answer = client.post(
            "/login", data={"csrf": csrf.group(1), "token": seeded.tokens["bob"], "next": "/team"}
        )
        assert answer.status_code == 303 and answer.headers["location"] == "/team"
        assert client.get("/team").status_code == 200
