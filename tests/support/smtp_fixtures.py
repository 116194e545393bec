"""A real SMTP server on 127.0.0.1 for tests that send mail (aiosmtpd in a thread).

Loaded for every test module by ``tests/conftest.py``. A test asks for ``mailbox``: the server
runs for that test, ``mailbox.url`` is its ``PROCTOR_SMTP_URL``, and ``mailbox.wait(to)``
returns the next mail to an address (parsed), ``mailbox.link(mail, path)`` the link of a path
in its body. ``mail_settings(mailbox, **fields)`` are service settings that send through it;
``tls_mailbox`` is a server speaking STARTTLS or TLS with a login.
"""

from __future__ import annotations

import email
import email.policy
import os
import re
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from proctor.settings import SmtpServer

WAIT_S = 20.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Mailbox:
    """Every mail the server took, with its envelope recipients."""

    def __init__(self) -> None:
        self.mails: list[tuple[list[str], EmailMessage]] = []
        self.changed = threading.Condition()
        self.port = 0

    @property
    def url(self) -> str:
        """The server as ``PROCTOR_SMTP_URL``."""
        return f"smtp://127.0.0.1:{self.port}"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        with self.changed:
            self.mails.append((list(envelope.rcpt_tos), parsed))
            self.changed.notify_all()
        return "250 OK"

    def to(self, address: str) -> list[EmailMessage]:
        """Every mail sent to ``address`` so far, oldest first (the lock is an RLock)."""
        with self.changed:
            return [mail for rcpts, mail in self.mails if address in rcpts]

    def wait(self, address: str, count: int = 1) -> EmailMessage:
        """The ``count``-th mail to ``address``, waiting up to ``WAIT_S`` for it."""
        deadline = time.monotonic() + WAIT_S
        with self.changed:
            while len(self.to(address)) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"no mail number {count} to {address}: {self.mails}"
                self.changed.wait(left)
            return self.to(address)[count - 1]

    @staticmethod
    def body(mail: EmailMessage) -> str:
        """The mail's plain-text body."""
        part = mail.get_body(("plain",))
        assert part is not None
        return str(part.get_content()).replace("\r\n", "\n")  # type: ignore[attr-defined]

    def link(self, mail: EmailMessage, path: str) -> str:
        """The first link in the mail's body whose path starts with ``path``."""
        found = re.search(r"https?://\S+" + re.escape(path) + r"\S*", self.body(mail))
        assert found, f"no link to {path} in {self.body(mail)!r}"
        return found.group(0)


@pytest.fixture
def mailbox() -> Iterator[Mailbox]:
    """A real SMTP server on 127.0.0.1 for this test, and the mail it took."""
    box = Mailbox()
    box.port = free_port()
    controller = Controller(box, hostname="127.0.0.1", port=box.port)
    controller.start()
    try:
        yield box
    finally:
        controller.stop()


def mail_settings(box: Mailbox, **fields: Any) -> dict[str, Any]:
    """``ServiceSettings`` fields that send mail through ``box`` (sign-up open by default)."""
    return {
        "signup": "open",
        "smtp": SmtpServer.parse(box.url),
        "mail_from": "proctor@example.org",
        "public_url": "http://proctor.example",
        **fields,
    }


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made with ``openssl`` (valid one day)."""
    cert, key = folder / "smtp-cert.pem", folder / "smtp-key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def login_checker(user: str, password: str) -> Any:
    """An aiosmtpd authenticator taking only ``user`` with ``password``."""

    def check(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        given = (getattr(data, "login", b""), getattr(data, "password", b""))
        return AuthResult(success=given == (user.encode(), password.encode()))

    return check


@contextmanager
def tls_mailbox(folder: Path, scheme: str, user: str, password: str) -> Iterator[Mailbox]:
    """A server speaking ``smtp+starttls`` or ``smtps`` with a login, its certificate trusted
    by this process (``SSL_CERT_FILE``) while it runs."""
    cert, key = self_signed(folder)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    box = Mailbox()
    box.port = free_port()
    tls: dict[str, Any] = (
        {"ssl_context": context, "auth_require_tls": False}  # the whole connection is TLS
        if scheme == "smtps"
        else {"tls_context": context, "require_starttls": True, "auth_required": True}
    )
    controller = Controller(
        box, hostname="127.0.0.1", port=box.port, authenticator=login_checker(user, password),
        **tls,
    )  # fmt: skip
    previous = os.environ.get("SSL_CERT_FILE")
    os.environ["SSL_CERT_FILE"] = str(cert)
    controller.start()
    try:
        yield box
    finally:
        controller.stop()
        if previous is None:
            os.environ.pop("SSL_CERT_FILE", None)
        else:
            os.environ["SSL_CERT_FILE"] = previous
