"""Forms of the pages carry a CSRF token; the answers carry the usual security headers.

Every form that changes something (sign in, sign out, submit, final choice, publish, cancel)
is posted by a signed-in victim's browser as an attacker's page would: without the token, with
a wrong one, from ``Origin: null`` (what Chromium sends after a cross-origin 307) or from a
foreign origin. Each gets 403 and changes nothing; the same form with the page's token and no
``Origin`` at all (older browsers) goes through. HTTP level: uvicorn on 127.0.0.1 and httpx.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_boards_fixtures import Svc, start
from service_seed import Seeded, archive, seed, served
from sqlalchemy import func, select
from toy_challenge import make_entry

from proctor.services.platform.resources import Platform
from proctor.store.models import FinalChoice, Publication, SubmissionRow
from proctor.web.app import create_app

with warnings.catch_warnings():  # starlette asks for httpx2, which this environment lacks
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

TOKEN_FIELD = re.compile(r'name="csrf" value="([^"]+)"')
ATTACKS: dict[str, dict[str, str]] = {
    "no token": {},
    "wrong token": {"csrf": "0" * 64},
}
ORIGINS = ("null", "http://evil.example")


def _token(page: httpx.Response) -> str:
    found = TOKEN_FIELD.search(page.text)
    assert found, f"no CSRF field in {page.url}"
    return found.group(1)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Seeded, str]]:
    seeded = seed(tmp_path)
    with served(seeded.app) as url:
        yield seeded, url
    seeded.platform.close()


def _signed_in(url: str, token: str) -> httpx.Client:
    """A browser of the user: it signed in through the login form (cookies kept)."""
    browser = httpx.Client(base_url=url, timeout=60)
    form = _token(browser.get("/login"))
    answer = browser.post("/login", data={"token": token, "csrf": form})
    assert answer.status_code == 303, answer.text
    return browser


def _count(platform: Platform, model: Any) -> int:
    with platform.db() as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


def test_a_submission_form_without_the_pages_token_is_refused(
    site: tuple[Seeded, str], tmp_path: Path
) -> None:
    seeded, url = site
    upload = archive(make_entry(tmp_path / "entry"))
    with closing(_signed_in(url, seeded.tokens["alice"])) as browser:
        good = _token(browser.get("/challenges/toy"))
        sent = []
        for fields in ATTACKS.values():
            files = {"entry": ("entry.tar.gz", upload)}
            sent.append(browser.post("/challenges/toy/submit", data=fields, files=files))
        for origin in ORIGINS:
            files = {"entry": ("entry.tar.gz", upload)}
            sent.append(
                browser.post(
                    "/challenges/toy/submit",
                    data={"csrf": good},
                    files=files,
                    headers={"Origin": origin},
                )
            )
        assert [a.status_code for a in sent] == [403] * 4, [a.text[:200] for a in sent]
        assert _count(seeded.platform, SubmissionRow) == 0
        files = {"entry": ("entry.tar.gz", upload)}
        honest = browser.post("/challenges/toy/submit", data={"csrf": good}, files=files)
        assert honest.status_code == 303 and _count(seeded.platform, SubmissionRow) == 1


def test_login_needs_the_login_pages_token(site: tuple[Seeded, str]) -> None:
    """An attacker's page cannot sign a victim in as the attacker."""
    seeded, url = site
    with httpx.Client(base_url=url, timeout=60) as victim:
        good = _token(victim.get("/login"))
        attacker = seeded.tokens["bob"]
        refused = [
            victim.post("/login", data={"token": attacker, **fields}) for fields in ATTACKS.values()
        ]
        refused += [
            victim.post("/login", data={"token": attacker, "csrf": good}, headers={"Origin": o})
            for o in ORIGINS
        ]
        assert [a.status_code for a in refused] == [403] * 4
        assert all("proctor_token" not in a.headers.get("set-cookie", "") for a in refused)
        assert 'id="me"' not in victim.get("/").text
        own = victim.post("/login", data={"token": seeded.tokens["alice"], "csrf": good})
        assert own.status_code == 303 and "proctor_token=" in own.headers["set-cookie"]


def test_sign_out_needs_the_token_and_drops_the_cookie_only(site: tuple[Seeded, str]) -> None:
    seeded, url = site
    with closing(_signed_in(url, seeded.tokens["alice"])) as browser:
        refused = browser.post("/logout", headers={"Origin": "null"})
        assert refused.status_code == 403
        page = browser.get("/")
        assert 'id="me"' in page.text
        out = browser.post("/logout", data={"csrf": _token(page)})
        assert out.status_code == 303 and 'id="me"' not in browser.get("/").text
    rest = httpx.get(f"{url}/api/v1/me", headers=seeded.headers("alice"))
    assert rest.status_code == 200  # signing out revokes nothing: the CLI's token still works


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Svc]:
    service = start(f"sqlite:///{tmp_path / 'db.sqlite3'}", tmp_path)
    yield service
    service.client.close()
    Platform.close(service.platform)


def test_choices_on_a_submission_page_need_the_pages_token(svc: Svc) -> None:
    sid = svc.scored("s1", "blue", "open", {"auprc": 0.5})
    browser = svc.client
    form = _token(browser.get("/login"))
    browser.post("/login", data={"token": svc.tokens["bob"], "csrf": form})
    good = _token(browser.get(f"/submissions/{sid}"))
    publish = {"task": "arousal", "part": "", "published": "true"}
    for path, fields in (
        (f"/submissions/{sid}/final", {}),
        (f"/submissions/{sid}/publish", publish),
    ):
        attempts = [browser.post(path, data={**fields, **bad}) for bad in ATTACKS.values()]
        attempts += [
            browser.post(path, data={**fields, "csrf": good}, headers={"Origin": origin})
            for origin in ORIGINS
        ]
        assert [a.status_code for a in attempts] == [403] * 4, path
    assert _count(svc.platform, FinalChoice) == 0 and _count(svc.platform, Publication) == 0
    chosen = browser.post(f"/submissions/{sid}/final", data={"csrf": good}, follow_redirects=False)
    assert chosen.status_code == 303 and _count(svc.platform, FinalChoice) == 1


def test_answers_carry_the_security_headers(svc: Svc) -> None:
    for path in ("/", "/login", "/api/v1/challenges"):
        headers = svc.client.get(path).headers
        assert headers["x-frame-options"] == "DENY"
        policy = headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
        assert "unsafe-inline" not in policy
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "same-origin"
    page = svc.client.get("/login").text
    assert "<script" not in page and "<style" not in page  # a strict policy: nothing inline
    style = svc.client.get("/static/proctor.css")
    assert style.status_code == 200 and "font-family" in style.text


def _login_cookie(app: Any, base_url: str, token: str, **headers: str) -> str:
    with TestClient(app, base_url=base_url) as browser:
        form = _token(browser.get("/login"))
        sent = {"token": token, "csrf": form}
        answer = browser.post("/login", data=sent, headers=headers, follow_redirects=False)
        assert answer.status_code == 303, answer.text
        return str(answer.headers["set-cookie"])


def test_the_session_cookie_is_secure_behind_tls(svc: Svc) -> None:
    bob = svc.tokens["bob"]
    assert "secure" in _login_cookie(svc.client.app, "https://testserver", bob).lower()
    plain = _login_cookie(
        svc.client.app, "http://testserver", bob, **{"X-Forwarded-Proto": "https"}
    )
    assert "secure" not in plain.lower()  # no proxy is trusted unless configured
    svc.platform.settings = replace(svc.platform.settings, trust_proxy=True)
    proxied = _login_cookie(
        create_app(svc.platform), "http://testserver", bob, **{"X-Forwarded-Proto": "https"}
    )
    assert "secure" in proxied.lower()
