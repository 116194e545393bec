"""Accounts people make themselves, at the HTTP level and the service's: each security property.

A served toy platform (uvicorn on 127.0.0.1, httpx as the browser) sends its mail to a real
SMTP server on 127.0.0.1 (``smtp_fixtures``). Sign-up confirms the email by a link from the
mail; sign-in takes a name or email and a password; the answers never tell whether a name or
an address has an account; links are signed, single-use and expire; failures are
rate-limited per client address and per account; cookies are ``HttpOnly`` and
``SameSite=Lax`` (``Secure`` over TLS); every new form needs its CSRF token; disabling a user
ends their sessions and tokens at once.
"""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_seed import Seeded, seed, served
from smtp_fixtures import Mailbox, mail_settings
from sqlalchemy import select

from proctor.errors import AuthenticationError, ForbiddenError, UsageError
from proctor.services.platform import links, passwords, profile, signin, signup, users_admin
from proctor.services.platform.accounts import authenticate
from proctor.services.platform.resources import open_platform
from proctor.services.platform.throttle import Throttle, TooManyAttemptsError
from proctor.settings import ServiceSettings, Settings
from proctor.store.models import ApiToken, User

with warnings.catch_warnings():  # starlette asks for httpx2, which this environment lacks
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
PASSWORD = "correct horse battery"


def _csrf(page: httpx.Response) -> str:
    found = CSRF.search(page.text)
    assert found, f"no CSRF field in {page.url}: {page.text[:300]}"
    return found.group(1)


class Site:
    """The served platform, its base URL and its mailbox."""

    def __init__(self, seeded: Seeded, url: str, mailbox: Mailbox) -> None:
        self.seeded, self.url, self.mailbox = seeded, url, mailbox

    @property
    def platform(self) -> Any:
        return self.seeded.platform

    def browser(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60)

    def post(self, browser: httpx.Client, page: str, **fields: str) -> httpx.Response:
        """Post a form as the page at ``page`` would (with that page's CSRF token)."""
        shown = browser.get(page)
        target = page.split("?", maxsplit=1)[0]
        return browser.post(target, data={"csrf": _csrf(shown), **fields})

    def sign_up(self, name: str, email: str, password: str = PASSWORD) -> httpx.Response:
        with self.browser() as browser:
            return self.post(browser, "/signup", name=name, email=email, password=password)

    def confirm(self, email: str, count: int = 1) -> httpx.Response:
        """Open the confirmation link of the ``count``-th mail to ``email`` and press confirm."""
        link = self.mailbox.link(self.mailbox.wait(email, count), "/signup/verify")
        path = link.removeprefix("http://proctor.example")
        with self.browser() as browser:
            page = browser.get(path)
            assert page.status_code == 200, page.text
            token = path.split("t=", 1)[1]
            return browser.post("/signup/verify", data={"csrf": _csrf(page), "t": token})

    def sign_in(
        self, browser: httpx.Client, login: str, password: str = PASSWORD
    ) -> httpx.Response:
        return self.post(browser, "/login", login=login, password=password)


def _site(tmp_path: Path, mailbox: Mailbox, **settings: Any) -> Iterator[Site]:
    seeded = seed(tmp_path, **mail_settings(mailbox, **settings))
    with served(seeded.app) as url:
        yield Site(seeded, url, mailbox)
    seeded.platform.close()


@pytest.fixture
def site(tmp_path: Path, mailbox: Mailbox) -> Iterator[Site]:
    yield from _site(tmp_path, mailbox)


@pytest.fixture
def approval_site(tmp_path: Path, mailbox: Mailbox) -> Iterator[Site]:
    yield from _site(tmp_path, mailbox, signup="approval")


def _error(page: httpx.Response) -> str:
    found = re.search(r'class="error" role="alert">([^<]*)<', page.text)
    return found.group(1) if found else ""


def test_a_new_person_signs_up_confirms_by_the_mailed_link_and_signs_in(site: Site) -> None:
    answer = site.sign_up("ada", "Ada@Example.org")
    assert answer.status_code == 200 and "confirm it is on its way" in answer.text
    mail = site.mailbox.wait("ada@example.org")
    assert mail["Subject"] == "Confirm your email for Proctor"
    with site.browser() as browser:
        refused = site.sign_in(browser, "ada")
        assert refused.status_code == 401 and "confirm your email first" in refused.text
    confirmed = site.confirm("ada@example.org")
    assert confirmed.status_code == 303 and confirmed.headers["location"] == "/login?done=confirmed"
    for login in ("ada", "ADA@example.org"):
        with site.browser() as browser:
            signed = site.sign_in(browser, login)
            assert signed.status_code == 303, signed.text
            assert 'id="me">ada<' in browser.get("/").text


def test_answers_never_tell_whether_a_name_or_an_email_has_an_account(site: Site) -> None:
    site.sign_up("ada", "ada@example.org")
    site.confirm("ada@example.org")
    new = site.sign_up("bea", "bea@example.org")
    same_email = site.sign_up("zed", "ada@example.org")
    same_name = site.sign_up("ada", "cat@example.org")
    assert new.status_code == same_email.status_code == same_name.status_code == 200
    shown = [re.search(r'id="mail-sent">([^<]*)<', a.text) for a in (new, same_email, same_name)]
    assert len({m.group(1) for m in shown if m}) == 1 and all(shown)
    # the owner of each address is told what happened, by mail only
    assert "has an account already: ada" in site.mailbox.body(
        site.mailbox.wait("ada@example.org", 2)
    )
    assert "another account has that name" in site.mailbox.body(
        site.mailbox.wait("cat@example.org")
    )
    with site.browser() as browser:
        unknown = site.sign_in(browser, "nobody")
        wrong = site.sign_in(browser, "ada", "wrong password!")
        unknown_email = site.sign_in(browser, "nobody@example.org")
    assert unknown.status_code == wrong.status_code == unknown_email.status_code == 401
    assert _error(unknown) == _error(wrong) == _error(unknown_email) == signin.WRONG
    with site.browser() as browser:
        known = site.post(browser, "/password-reset", email="ada@example.org")
        unknown_reset = site.post(browser, "/password-reset", email="nobody@example.org")
    assert known.status_code == unknown_reset.status_code == 200
    assert known.text.replace("ada@", "X") == unknown_reset.text.replace("nobody@", "X")


def test_a_password_reset_link_sets_a_new_password_once_and_ends_sessions(site: Site) -> None:
    site.sign_up("ada", "ada@example.org")
    site.confirm("ada@example.org")
    old = site.browser()
    assert site.sign_in(old, "ada").status_code == 303
    with site.browser() as browser:
        site.post(browser, "/password-reset", email="ada@example.org")
    link = site.mailbox.link(site.mailbox.wait("ada@example.org", 2), "/password-reset/new")
    path = link.removeprefix("http://proctor.example")
    token = path.split("t=", 1)[1]
    with site.browser() as browser:
        page = browser.get(path)
        assert "For the account <strong>ada</strong>" in page.text
        done = browser.post(
            "/password-reset/new",
            data={"csrf": _csrf(page), "t": token, "password": "new pass 123"},
        )
        assert done.status_code == 303 and done.headers["location"] == "/login?done=reset"
        again = browser.post(
            "/password-reset/new", data={"csrf": _csrf(page), "t": token, "password": "other 12345"}
        )
        assert again.status_code == 400 and "not valid" in again.text
    assert 'id="me"' not in old.get("/").text  # the session of before the reset ended
    old.close()
    with site.browser() as browser:
        assert site.sign_in(browser, "ada").status_code == 401
        assert site.sign_in(browser, "ada", "new pass 123").status_code == 303


def test_a_confirmation_link_works_once(site: Site) -> None:
    site.sign_up("ada", "ada@example.org")
    assert site.confirm("ada@example.org").status_code == 303
    with pytest.raises(AssertionError):  # the link's page says it is not valid any more
        site.confirm("ada@example.org")


def test_links_are_signed_single_use_and_expire(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    platform = site.platform
    olga = authenticate(platform, site.seeded.tokens["olga"])
    made = time.time()
    for purpose, life in (("verify", 24 * 3600), ("reset", 3600)):
        token = links.make(platform, olga.user_id, purpose)
        forged = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
        with pytest.raises(links.LinkError):
            links.use(platform, forged, purpose)
        other = "reset" if purpose == "verify" else "verify"
        with pytest.raises(links.LinkError):
            links.use(platform, token, other)
        monkeypatch.setattr(time, "time", lambda life=life: made + life + 60)
        with pytest.raises(links.LinkError, match="older than"):
            links.use(platform, token, purpose)
        monkeypatch.setattr(time, "time", lambda life=life: made + life - 60)
        assert links.use(platform, token, purpose) == olga.user_id
        with pytest.raises(links.LinkError):
            links.use(platform, token, purpose)
        monkeypatch.undo()
    first = links.make(platform, olga.user_id, "reset")
    links.make(platform, olga.user_id, "reset")
    with pytest.raises(links.LinkError):  # a newer link replaced it
        links.use(platform, first, "reset")


def test_failed_sign_ins_are_limited_per_address_and_per_account(site: Site) -> None:
    platform = site.platform
    platform.throttle = Throttle({"signin": ("4/hour", "3/hour"), "signup": ("9/hour", "9/hour")})
    site.sign_up("ada", "ada@example.org")
    site.confirm("ada@example.org")
    for attempt in range(5):  # a successful sign-in never counts
        assert signin.sign_in(platform, "ada", PASSWORD, "10.0.0.1").user == "ada", attempt
    for address in ("10.0.0.2", "10.0.0.3", "10.0.0.4"):  # one account from many addresses
        with pytest.raises(AuthenticationError):
            signin.sign_in(platform, "ada", "wrong password", address)
    with pytest.raises(TooManyAttemptsError, match="try again in"):
        signin.sign_in(platform, "ada", PASSWORD, "10.0.0.5")  # even the right password now
    for name in ("bob", "carl", "dora", "emil"):  # many accounts from one address
        with pytest.raises(AuthenticationError):
            signin.sign_in(platform, name, "wrong password", "10.0.0.6")
    with pytest.raises(TooManyAttemptsError):
        signin.sign_in(platform, "fred", "wrong password", "10.0.0.6")
    with pytest.raises(TooManyAttemptsError):  # the same refusal for an account that exists
        signin.sign_in(platform, "olga", "wrong password", "10.0.0.6")


def test_sign_ups_and_resets_are_limited_per_address_and_per_account(site: Site) -> None:
    platform = site.platform
    platform.throttle = Throttle(
        {
            "signin": ("9/hour", "9/hour"),
            "signup": ("3/hour", "2/hour"),
            "reset": ("3/hour", "2/hour"),
        }
    )
    for name in ("ann1", "ann2"):
        signup.sign_up(platform, name, "ann@example.org", PASSWORD, "10.1.0.1")
    with pytest.raises(TooManyAttemptsError):  # the third for one address typed
        signup.sign_up(platform, "ann3", "ann@example.org", PASSWORD, "10.1.0.2")
    signup.sign_up(platform, "bo", "bo@example.org", PASSWORD, "10.1.0.1")
    with pytest.raises(TooManyAttemptsError):  # the fourth from one client address
        signup.sign_up(platform, "cy", "cy@example.org", PASSWORD, "10.1.0.1")
    for address in ("10.2.0.1", "10.2.0.2"):
        signin.request_reset(platform, "ann@example.org", address)
    with pytest.raises(TooManyAttemptsError):
        signin.request_reset(platform, "ann@example.org", "10.2.0.3")
    for email in ("x1@example.org", "x2@example.org"):
        signin.request_reset(platform, email, "10.3.0.1")
    signin.request_reset(platform, "x3@example.org", "10.3.0.1")
    with pytest.raises(TooManyAttemptsError):
        signin.request_reset(platform, "x4@example.org", "10.3.0.1")


def test_too_many_sign_ins_get_429_on_the_page(site: Site) -> None:
    site.platform.throttle = Throttle({"signin": ("2/hour", "9/hour")})
    with site.browser() as browser:
        for _ in range(2):
            assert site.sign_in(browser, "nobody", "wrong password").status_code == 401
        limited = site.sign_in(browser, "olga", "wrong password")
    assert limited.status_code == 429 and "too many attempts" in limited.text


def test_session_cookies_are_httponly_lax_and_secure_behind_tls(
    tmp_path: Path, mailbox: Mailbox
) -> None:
    seeded = seed(tmp_path, **mail_settings(mailbox, trust_proxy=True))
    site = Site(seeded, "", mailbox)
    with TestClient(seeded.app, base_url="http://proctor.example") as client:
        client.cookies.clear()
        page = client.get("/signup")
        client.post("/signup", data={"csrf": _csrf(page), "name": "ada",
                                     "email": "ada@example.org", "password": PASSWORD})  # fmt: skip
        site.url = "http://proctor.example"
        link = mailbox.link(mailbox.wait("ada@example.org"), "/signup/verify")
        token = link.split("t=", 1)[1]
        shown = client.get(f"/signup/verify?t={token}")
        client.post("/signup/verify", data={"csrf": _csrf(shown), "t": token})
        for proto, secure in (("http", False), ("https", True)):
            login = client.get("/login", headers={"X-Forwarded-Proto": proto})
            answer = client.post(
                "/login",
                data={"csrf": _csrf(login), "login": "ada", "password": PASSWORD},
                headers={"X-Forwarded-Proto": proto},
                follow_redirects=False,
            )
            assert answer.status_code == 303, answer.text
            cookie = next(
                c for c in answer.headers.get_list("set-cookie") if c.startswith("proctor_token=")
            )
            assert "HttpOnly" in cookie and "samesite=lax" in cookie.lower()
            assert ("Secure" in cookie) is secure, cookie
    seeded.platform.close()


NEW_FORMS = [
    "/signup",
    "/signup/verify",
    "/password-reset",
    "/password-reset/new",
    "/account/tokens",
    "/account/tokens/1/revoke",
    "/account/notifications",
    "/console/accounts/ada/approve",
    "/console/accounts/ada/deny",
]


@pytest.mark.parametrize("form", NEW_FORMS)
def test_every_new_form_is_refused_without_its_csrf_token(site: Site, form: str) -> None:
    with site.browser() as browser:
        browser.get("/login")  # the browser has its nonce
        browser.post("/login", data={"csrf": _csrf(browser.get("/login")),
                                     "token": site.seeded.tokens["olga"]})  # fmt: skip
        for fields in ({}, {"csrf": "0" * 64}):
            answer = browser.post(form, data={"name": "x", "email": "x@example.org", **fields})
            assert answer.status_code == 403, (form, answer.status_code)
            assert "CSRF" in answer.text
    assert site.mailbox.mails == []


def test_disabling_a_user_ends_their_sessions_and_tokens_at_once(site: Site) -> None:
    site.sign_up("ada", "ada@example.org")
    site.confirm("ada@example.org")
    browser = site.browser()
    site.sign_in(browser, "ada")
    page = browser.get("/account")
    made = browser.post("/account/tokens", data={"csrf": _csrf(page)})
    token = re.search(r'<pre id="token">([^<]+)</pre>', made.text)
    assert token, made.text
    api = httpx.Client(base_url=site.url, headers={"Authorization": f"Bearer {token.group(1)}"})
    assert api.get("/api/v1/tokens").status_code == 200
    olga = authenticate(site.platform, site.seeded.tokens["olga"])
    users_admin.disable(site.platform, olga, "ada")
    assert api.get("/api/v1/tokens").status_code == 401
    assert browser.get("/account").status_code == 401
    with site.platform.db() as session:
        ada = session.scalar(select(User).where(User.name == "ada"))
        assert ada is not None
        held = list(session.scalars(select(ApiToken).where(ApiToken.user_id == ada.id)))
    assert held and all(t.revoked for t in held)  # they stay revoked were she enabled again
    with site.browser() as other:
        assert site.sign_in(other, "ada").status_code == 401
    api.close()
    browser.close()


def test_the_account_page_makes_shows_once_and_revokes_tokens_and_keeps_the_mail_switch(
    site: Site,
) -> None:
    site.sign_up("ada", "ada@example.org")
    site.confirm("ada@example.org")
    with site.browser() as browser:
        site.sign_in(browser, "ada")
        page = browser.get("/account")
        assert 'id="no-tokens"' in page.text
        made = browser.post("/account/tokens", data={"csrf": _csrf(page)})
        token = re.search(r'<pre id="token">([^<]+)</pre>', made.text)
        assert token
        again = browser.get("/account")
        assert token.group(1) not in again.text and 'id="tokens"' in again.text
        api = httpx.Client(base_url=site.url, headers={"Authorization": f"Bearer {token.group(1)}"})
        listed = api.get("/api/v1/tokens").json()
        assert listed["user"] == "ada" and len(listed["tokens"]) == 1
        token_id = listed["tokens"][0]["id"]
        revoked = browser.post(f"/account/tokens/{token_id}/revoke", data={"csrf": _csrf(again)})
        assert revoked.status_code == 303
        assert api.get("/api/v1/tokens").status_code == 401
        api.close()
        other = site.seeded.tokens["bob"]
        bob_token = authenticate(site.platform, other).token_id
        stolen = browser.post(f"/account/tokens/{bob_token}/revoke", data={"csrf": _csrf(again)})
        assert stolen.status_code == 404
        assert authenticate(site.platform, other).name == "bob"
        assert profile.finished_mail_to(site.platform, "ada") == "ada@example.org"
        off = browser.post("/account/notifications", data={"csrf": _csrf(again)})
        assert off.status_code == 303
        assert 'value="on" checked' not in browser.get("/account").text
        assert profile.finished_mail_to(site.platform, "ada") is None
        browser.post("/account/notifications", data={"csrf": _csrf(again), "finished": "on"})
        assert profile.finished_mail_to(site.platform, "ada") == "ada@example.org"


def test_in_approval_mode_an_organizer_approves_or_denies_and_the_person_is_mailed(
    approval_site: Site,
) -> None:
    site = approval_site
    for name in ("ada", "bea"):
        site.sign_up(name, f"{name}@example.org")
        assert site.confirm(f"{name}@example.org").headers["location"] == "/login?done=waiting"
        with site.browser() as browser:
            waits = site.sign_in(browser, name)
            assert waits.status_code == 401 and "approval" in waits.text
    site.sign_up("cy", "cy@example.org")  # not confirmed: not listed
    with site.browser() as organizer:
        organizer.post("/login", data={"csrf": _csrf(organizer.get("/login")),
                                       "token": site.seeded.tokens["olga"]})  # fmt: skip
        listed = organizer.get("/console/accounts")
        assert "ada@example.org" in listed.text and "bea@example.org" in listed.text
        assert "cy@example.org" not in listed.text
        approved = organizer.post("/console/accounts/ada/approve", data={"csrf": _csrf(listed)})
        denied = organizer.post("/console/accounts/bea/deny", data={"csrf": _csrf(listed)})
        assert approved.status_code == denied.status_code == 303
        assert "ada" not in organizer.get("/console/accounts").text.split("<h1>")[1]
    assert "was approved" in site.mailbox.wait("ada@example.org", 2)["Subject"]
    assert "was denied" in site.mailbox.wait("bea@example.org", 2)["Subject"]
    with site.browser() as browser:
        assert site.sign_in(browser, "ada").status_code == 303
        assert site.sign_in(browser, "bea").status_code == 401
    with site.browser() as participant:
        participant.post("/login", data={"csrf": _csrf(participant.get("/login")),
                                         "token": site.seeded.tokens["bob"]})  # fmt: skip
        assert participant.get("/console/accounts").status_code == 404


def test_sign_up_is_refused_when_closed_and_the_page_says_so(tmp_path: Path) -> None:
    seeded = seed(tmp_path)
    with served(seeded.app) as url, httpx.Client(base_url=url) as browser:
        page = browser.get("/signup")
        assert 'id="signup-closed"' in page.text and 'id="signup-header"' not in page.text
        refused = browser.post("/signup", data={"csrf": _csrf(browser.get("/login")),
                                                "name": "ada", "email": "a@example.org",
                                                "password": PASSWORD})  # fmt: skip
        assert refused.status_code == 403 and "closed" in refused.text
    with pytest.raises(ForbiddenError):
        signup.sign_up(seeded.platform, "ada", "a@example.org", PASSWORD, "10.0.0.1")
    seeded.platform.close()


@pytest.mark.parametrize(
    ("name", "email", "password", "refusal"),
    [
        ("ada\r\nBcc: eve@example.org", "ada@example.org", PASSWORD, "name"),
        ("ada", "ada@example.org\r\nBcc: eve@example.org", PASSWORD, "email"),
        ("ada", "not an address", PASSWORD, "email"),
        ("ada", "ada@example.org", "short", "password"),
    ],
)
def test_a_bad_field_is_refused_before_any_mail_and_named(
    site: Site, name: str, email: str, password: str, refusal: str
) -> None:
    with pytest.raises(UsageError, match=refusal):
        signup.sign_up(site.platform, name, email, password, "10.0.0.1")
    answer = site.sign_up(name, email, password)
    assert answer.status_code == 400 and refusal in _error(answer)
    assert site.mailbox.mails == []


def test_token_sign_in_and_user_add_keep_working(site: Site) -> None:
    with site.browser() as browser:
        page = browser.get("/login")
        signed = browser.post(
            "/login", data={"csrf": _csrf(page), "token": site.seeded.tokens["alice"]}
        )
        assert signed.status_code == 303
        assert 'id="me">alice<' in browser.get("/").text
        out = browser.post("/logout", data={"csrf": _csrf(browser.get("/"))})
        assert out.status_code == 303
    assert authenticate(site.platform, site.seeded.tokens["alice"]).name == "alice"


def test_on_sqlite_and_postgresql_a_link_raced_by_threads_is_used_once(
    database_url: str, tmp_path: Path, mailbox: Mailbox
) -> None:
    settings = ServiceSettings(
        data=tmp_path / "data", database_url=database_url, **mail_settings(mailbox)
    )
    platform = open_platform(settings, Settings(work_root=tmp_path / "work"))
    try:
        signup.sign_up(platform, "ada", "ada@example.org", PASSWORD, "10.0.0.1")
        link = mailbox.link(mailbox.wait("ada@example.org"), "/signup/verify")
        token = link.split("t=", 1)[1]

        def confirm(_: int) -> str:
            try:
                return signup.confirm(platform, token).user
            except links.LinkError:
                return "refused"

        with ThreadPoolExecutor(8) as pool:
            outcomes = sorted(pool.map(confirm, range(8)))
        assert outcomes == ["ada"] + ["refused"] * 7
        assert signin.sign_in(platform, "ada@example.org", PASSWORD, "10.0.0.1").user == "ada"
    finally:
        platform.close()


def test_signing_up_again_before_confirming_mails_a_new_link_and_ends_the_old(site: Site) -> None:
    site.sign_up("ada", "ada@example.org")
    first = site.mailbox.link(site.mailbox.wait("ada@example.org"), "/signup/verify")
    site.sign_up("ada", "ada@example.org")
    second = site.mailbox.link(site.mailbox.wait("ada@example.org", 2), "/signup/verify")
    assert first != second
    with pytest.raises(links.LinkError):
        signup.confirm(site.platform, first.split("t=", 1)[1])
    assert signup.confirm(site.platform, second.split("t=", 1)[1]).user == "ada"


def test_an_account_never_confirmed_gives_up_its_name_and_address_after_a_day(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    platform = site.platform
    signup.sign_up(platform, "ada", "squat@example.org", PASSWORD, "10.0.0.1")
    later = time.time() + 25 * 3600
    monkeypatch.setattr(time, "time", lambda: later)
    signup.sign_up(platform, "ada", "ada@example.org", PASSWORD, "10.0.0.2")
    mail = site.mailbox.wait("ada@example.org")
    assert mail["Subject"] == "Confirm your email for Proctor"
    token = site.mailbox.link(mail, "/signup/verify").split("t=", 1)[1]
    assert signup.confirm(platform, token).user == "ada"
    with platform.db() as session:
        emails = list(session.scalars(select(User.email).where(User.name == "ada")))
    assert emails == ["ada@example.org"]


def test_the_organizers_list_shows_each_accounts_email_and_state(approval_site: Site) -> None:
    site = approval_site
    site.sign_up("ada", "ada@example.org")
    site.sign_up("bea", "bea@example.org")
    site.confirm("bea@example.org")
    olga = authenticate(site.platform, site.seeded.tokens["olga"])
    users = {u.user: u for u in users_admin.users_and_teams(site.platform, olga).users}
    assert (users["ada"].email, users["ada"].state) == ("ada@example.org", "unconfirmed")
    assert users["bea"].state == "pending"
    assert (users["bob"].email, users["bob"].state) == (None, "active")
    users_admin.disable(site.platform, olga, "bob")
    assert {u.user: u.state for u in users_admin.users_and_teams(site.platform, olga).users}[
        "bob"
    ] == "disabled"


def test_an_unknown_login_costs_one_password_check_as_a_wrong_password_does(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks: list[str] = []
    real = passwords._hasher

    class Counted:
        def verify(self, stored: str, password: str) -> bool:
            checks.append(stored)
            return bool(real.verify(stored, password))

    monkeypatch.setattr(passwords, "_hasher", Counted())
    for login in ("nobody", "olga", "bob"):  # olga and bob have no password: the same check
        with pytest.raises(AuthenticationError, match="not right"):
            signin.sign_in(site.platform, login, "wrong password", f"10.9.0.{len(checks)}")
    assert len(checks) == 3


def test_signing_out_ends_the_password_session_on_the_server(site: Site) -> None:
    site.sign_up("ada", "ada@example.org")
    site.confirm("ada@example.org")
    with site.browser() as browser:
        site.sign_in(browser, "ada")
        cookie = browser.cookies["proctor_token"]
        assert cookie.startswith("s.")
        browser.post("/logout", data={"csrf": _csrf(browser.get("/"))})
    with site.browser() as thief:
        thief.cookies.set("proctor_token", cookie)
        assert thief.get("/account").status_code == 401
