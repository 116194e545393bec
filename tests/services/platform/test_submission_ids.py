"""A submission is named by its full id or any unique prefix of at least eight characters.

Through the service, the REST routes, the pages and ``proctor status``: a prefix resolves
among the caller's own submissions only (another team's prefix is "not found"), a shorter
one is refused saying how many characters to give, an ambiguous one says how many match.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from service_seed import Seeded, seed, served
from table_challenge import TEST, make_table_challenge

from proctor.errors import NotFoundError, UsageError
from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import authenticate
from proctor.services.platform.submission_ids import full_id

PROCTOR = str(Path(sys.executable).with_name("proctor"))
IDS = ("abcdef0100000001", "abcdef0100000002", "abcdef0211111111")
CSV = ("id,target\n" + "".join(f"{k},{v}\n" for k, v in TEST.items())).encode()


class _FixedIds:
    def __init__(self, ids: tuple[str, ...]) -> None:
        self.left = list(ids)

    def token_hex(self, _: int) -> str:
        return self.left.pop(0)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Seeded, str]]:
    seeded = seed(tmp_path / "service")
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    installs.install(seeded.platform, olga, str(make_table_challenge(tmp_path / "tabular")))
    monkeypatch.setattr(submissions, "secrets", _FixedIds(IDS))
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    for _ in IDS:
        submissions.submit(
            seeded.platform, alice, "tabular", None, io.BytesIO(CSV), "submission.csv"
        )
    with served(seeded.app) as url:
        yield seeded, url
    seeded.platform.close()


def test_the_service_resolves_a_unique_prefix_and_refuses_the_rest(
    site: tuple[Seeded, str],
) -> None:
    seeded, _ = site
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    bob = authenticate(seeded.platform, seeded.tokens["bob"])
    assert full_id(seeded.platform, alice, "abcdef02") == IDS[2]
    assert full_id(seeded.platform, alice, IDS[0]) == IDS[0]
    with pytest.raises(UsageError, match="2 submissions start with 'abcdef01'"):
        full_id(seeded.platform, alice, "abcdef01")
    with pytest.raises(UsageError, match="at least 8 of its first characters"):
        full_id(seeded.platform, alice, "abcdef0")
    with pytest.raises(NotFoundError, match="no submission 'abcdef02'"):
        full_id(seeded.platform, bob, "abcdef02")  # another team's
    with pytest.raises(NotFoundError):
        full_id(seeded.platform, alice, "abcdef0_%")  # never a pattern


def test_every_route_taking_an_id_takes_a_prefix(site: tuple[Seeded, str]) -> None:
    seeded, url = site
    with httpx.Client(base_url=url, headers=seeded.headers("alice"), timeout=60) as client:
        status = client.get("/api/v1/submissions/abcdef02")
        assert status.status_code == 200, status.text
        assert status.json()["submission"] == IDS[2]
        cancelled = client.post("/api/v1/submissions/abcdef021/cancel")
        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["submission"] == IDS[2]
        ambiguous = client.get("/api/v1/submissions/abcdef01")
        assert ambiguous.status_code == 400
        assert "2 submissions start with" in ambiguous.json()["error"]["message"]
        short = client.get("/api/v1/submissions/abc")
        assert short.status_code == 400 and "too short" in short.json()["error"]["message"]
    with httpx.Client(base_url=url, headers=seeded.headers("olga"), timeout=60) as organizer:
        logs = organizer.get("/api/v1/submissions/abcdef02/logs")
        assert logs.status_code == 200 and logs.json()["submission"] == IDS[2]
        record = organizer.get("/api/v1/submissions/abcdef02/record")
        assert record.status_code == 200, record.text
    with httpx.Client(base_url=url, headers=seeded.headers("bob"), timeout=60) as other:
        assert other.get("/api/v1/submissions/abcdef02").status_code == 404


def test_the_page_shows_the_full_id_of_a_prefix(site: tuple[Seeded, str]) -> None:
    seeded, url = site
    cookies = {"proctor_token": seeded.tokens["alice"]}
    with httpx.Client(base_url=url, cookies=cookies, timeout=60) as browser:
        page = browser.get("/submissions/abcdef02")
        assert page.status_code == 200, page.text
        assert f"<code>{IDS[2]}</code>" in page.text
        listing = browser.get("/challenges/tabular")
        assert all(f"<code>{sid}</code>" in listing.text for sid in IDS)


def test_proctor_status_takes_a_prefix(site: tuple[Seeded, str]) -> None:
    seeded, url = site
    env = dict(os.environ, PROCTOR_SERVER=url, PROCTOR_TOKEN=seeded.tokens["alice"])
    done = subprocess.run(
        [PROCTOR, "status", "abcdef02", "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["submission"] == IDS[2]
    ambiguous = subprocess.run(
        [PROCTOR, "status", "abcdef01"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert ambiguous.returncode == 2, ambiguous.stderr
    assert "2 submissions start with 'abcdef01'" in ambiguous.stderr
