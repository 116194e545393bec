"""API tokens can be revoked, expire after ``PROCTOR_TOKEN_DAYS``, and show their last use.

``proctor token revoke`` / ``token show`` run as real processes with ``--json`` against uvicorn
on 127.0.0.1; ``token new`` works on the data folder as ``user add`` does. A revoked or expired
token is answered 401 by REST (exit status 5 in the CLI) and signs nobody in on the pages.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_seed import Seeded, seed, served
from sqlalchemy import update

from proctor.errors import UsageError
from proctor.settings import ServiceSettings
from proctor.store.models import ApiToken

PROCTOR = str(Path(sys.executable).with_name("proctor"))


@dataclass
class Site:
    seeded: Seeded
    url: str

    def cli(self, token: str | None, *args: str) -> tuple[int, Any]:
        env = dict(os.environ, PROCTOR_SERVER=self.url, PROCTOR_TOKEN=token or "")
        done = subprocess.run([PROCTOR, *args, "--json"], env=env, capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip
        return done.returncode, json.loads(done.stdout)

    def rest(
        self, token: str, method: str, path: str, body: dict[str, Any] | None = None
    ) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=f"{self.url}/api/v1", headers=headers, timeout=60) as http:
            answer = http.request(method, path, json=body)
        return answer.status_code, answer.json()


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    seeded = seed(tmp_path)
    with served(seeded.app) as url:
        yield Site(seeded, url)
    seeded.platform.close()


def test_a_user_revokes_their_own_token_and_it_is_refused_after(site: Site) -> None:
    alice = site.seeded.tokens["alice"]
    assert site.rest(alice, "GET", "/me")[0] == 200
    status, revoked = site.cli(alice, "token", "revoke")
    assert (status, revoked["user"], revoked["revoked"]) == (0, "alice", 1)
    status, refused = site.rest(alice, "GET", "/me")
    assert status == 401 and "revoked" in refused["error"]["message"]
    status, again = site.cli(alice, "token", "show")
    assert status == 5 and "revoked" in again["error"]["message"]
    assert site.rest(site.seeded.tokens["bob"], "GET", "/me")[0] == 200  # others keep theirs
    page = httpx.get(f"{site.url}/", cookies={"proctor_token": alice})
    assert 'id="me"' not in page.text  # a revoked token signs nobody in


def test_only_organizers_revoke_another_users_token(site: Site) -> None:
    tokens = site.seeded.tokens
    status, refused = site.cli(tokens["bob"], "token", "revoke", "alice")
    assert status == 5 and refused["error"]["kind"] == "forbidden"
    assert site.rest(tokens["alice"], "GET", "/me")[0] == 200
    status, revoked = site.rest(tokens["olga"], "POST", "/tokens/revoke", {"user": "alice"})
    assert (status, revoked) == (200, {"user": "alice", "revoked": 1})
    assert site.rest(tokens["alice"], "GET", "/me")[0] == 401
    assert site.rest(tokens["olga"], "POST", "/tokens/revoke", {"user": "nobody"})[0] == 404


def test_a_new_token_from_the_data_folder_works_after_a_revocation(site: Site) -> None:
    alice = site.seeded.tokens["alice"]
    assert site.cli(alice, "token", "revoke")[0] == 0
    data = str(site.seeded.platform.settings.data)
    status, issued = site.cli(None, "token", "new", "alice", "--data", data)
    assert status == 0 and issued["user"] == "alice" and issued["token"] != alice
    assert site.rest(issued["token"], "GET", "/me")[1]["user"] == "alice"
    status, shown = site.cli(issued["token"], "token", "show")
    assert status == 0 and shown["user"] == "alice"
    assert [t["revoked"] for t in shown["tokens"]] == [True, False]


def test_a_token_shows_when_it_was_last_used_and_when_it_expires(site: Site) -> None:
    data = str(site.seeded.platform.settings.data)
    fresh = site.cli(None, "token", "new", "bob", "--data", data)[1]["token"]
    before = time.time()
    status, me = site.rest(fresh, "GET", "/me")
    assert status == 200
    current = me["token"]
    assert current["last_used"] is not None and current["last_used"] >= _iso_floor(before)
    assert current["expires"] > current["created"]
    status, shown = site.cli(fresh, "token", "show")
    assert status == 0
    unused = [t for t in shown["tokens"] if not t["current"]]
    assert [t["last_used"] for t in unused] == [None]  # the seeded token was never used


def _iso_floor(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(at)))


def test_an_expired_token_is_refused_with_what_to_do(site: Site) -> None:
    days = site.seeded.platform.settings.token_days
    with site.seeded.platform.db.begin() as session:
        session.execute(update(ApiToken).values(created=time.time() - (days + 1) * 86400))
    status, refused = site.rest(site.seeded.tokens["alice"], "GET", "/me")
    assert status == 401 and "expired" in refused["error"]["message"]
    assert "token new" in refused["error"]["message"]


def test_token_days_and_the_trusted_proxy_are_read_from_the_environment() -> None:
    assert ServiceSettings.from_env({}).token_days == 90
    assert ServiceSettings.from_env({"PROCTOR_TOKEN_DAYS": "7"}).token_days == 7
    with pytest.raises(UsageError, match="PROCTOR_TOKEN_DAYS"):
        ServiceSettings.from_env({"PROCTOR_TOKEN_DAYS": "soon"})
    assert not ServiceSettings.from_env({}).trust_proxy
    assert ServiceSettings.from_env({"PROCTOR_TRUST_PROXY": "1"}).trust_proxy
