"""An unknown API token's 401 names the data folder to the organizer on this machine only.

The pages' token sign-in form refuses such a token in the same words as the API.

A real ``proctor serve`` on 127.0.0.1: a plain request comes from this machine; one carrying a
proxy's ``X-Forwarded-For`` stands for anyone on the internet (a proxy on this host forwards
every outside caller from 127.0.0.1).
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterator

import pytest
from cli_service import Service
from starlette.requests import Request

from proctor.settings import ServiceSettings
from proctor.web.token_refusals import from_this_machine

pytestmark = pytest.mark.slow
STRANGER = "a-token-made-with-another-data-folder"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    root = tmp_path_factory.mktemp("refusals")
    env = dict(os.environ, PROCTOR_DATA=str(root / "data"))
    for name in ("PROCTOR_DATABASE_URL", "PROCTOR_TOKEN", "PROCTOR_TRUST_PROXY"):
        env.pop(name, None)
    svc = Service(root / "data", env, log=root / "server.log")
    added = svc.cli("user", "add", "olga", "--organizer", "--json")
    assert added.returncode == 0, added.stderr
    svc.start()
    yield svc
    svc.stop()


def _refused(svc: Service, **headers: str) -> str:
    with svc.http() as client:
        answer = client.get(
            "/api/v1/me", headers={"Authorization": f"Bearer {STRANGER}", **headers}
        )
    assert answer.status_code == 401, answer.text
    message: str = answer.json()["error"]["message"]
    return message


def test_the_organizer_on_this_machine_is_told_the_folder_the_server_reads(served: Service) -> None:
    said = _refused(served)
    assert "not valid on this server" in said
    assert f"this server reads the data folder {served.data.resolve()}" in said


def test_a_caller_from_elsewhere_is_sent_to_the_log_which_names_the_folder(served: Service) -> None:
    for _ in range(3):
        said = _refused(served, **{"X-Forwarded-For": "203.0.113.7"})
        assert str(served.data) not in said and "/" not in said.split("server;")[-1], said
        assert "the server's log names the data folder it reads" in said
    served.stop()  # the log is whole once the server has stopped
    assert served.log is not None
    log = served.log.read_text()
    folder = str(served.data.resolve())
    assert f"proctor serve: reading the data folder {folder}" in log, log
    refusals = [line for line in log.splitlines() if "was refused" in line]
    assert len(refusals) == 1 and folder in refusals[0], log  # three refusals, one line
    served.start()  # the module's other tests may run after this one, in either order


def _form_refusal(svc: Service, **headers: str) -> str:
    """The error the token sign-in form shows for a token the server does not hold."""
    with svc.http() as client:
        form = client.get("/login", headers=headers)
        found = re.search(r'name="csrf" value="([^"]+)"', form.text)
        assert found is not None, form.text
        answer = client.post("/login", data={"csrf": found[1], "token": STRANGER}, headers=headers)
    assert answer.status_code == 401, answer.text
    shown = re.search(r'<p class="error" role="alert">(.*?)</p>', answer.text, re.S)
    assert shown is not None, answer.text
    return html.unescape(shown[1])


def test_the_sign_in_form_names_the_folder_to_the_organizer_on_this_machine(
    served: Service,
) -> None:
    said = _form_refusal(served)
    assert "not valid on this server" in said
    assert f"this server reads the data folder {served.data.resolve()}" in said


def test_the_sign_in_form_sends_a_caller_from_elsewhere_to_the_log(served: Service) -> None:
    said = _form_refusal(served, **{"X-Forwarded-For": "203.0.113.7"})
    assert "not valid on this server" in said
    assert "the server's log names the data folder it reads" in said
    assert str(served.data) not in said


def _request(client: str, *headers: tuple[bytes, bytes]) -> Request:
    return Request({"type": "http", "client": (client, 5000), "headers": list(headers)})


def test_only_an_unforwarded_loopback_caller_is_this_machine() -> None:
    assert from_this_machine(_request("127.0.0.1"))
    assert from_this_machine(_request("::1"))
    assert not from_this_machine(_request("203.0.113.7"))
    assert not from_this_machine(_request("127.0.0.1", (b"x-forwarded-for", b"203.0.113.7")))
    assert not from_this_machine(_request("127.0.0.1", (b"forwarded", b"for=203.0.113.7")))


def test_a_database_password_is_never_shown() -> None:
    settings = ServiceSettings(database_url="postgresql://proctor:s3cret@db:5432/proctor")
    assert settings.store_words == "the database postgresql://proctor:***@db:5432/proctor"
    assert "s3cret" not in settings.store_words
