"""The mailer: one plain-text mail to one address, through the server ``PROCTOR_SMTP_URL`` names.

``send(settings, to, subject, body)`` is what every use case calls (an address to confirm, a
password reset, an approval, a submission that finished). The message is built with
``email.message.EmailMessage`` and sent with ``smtplib``: plain SMTP (``smtp://``), STARTTLS
(``smtp+starttls://``) or TLS from the start (``smtps://``), logging in when the URL has a user.
A recipient, sender or subject holding a line break or another control character is refused
(``MailHeaderError``) before anything is sent, so no text a person typed can add a header.
``send_for_visitor`` is the same for a form anyone may post: a server fault shows no detail.
``link(settings, path)`` is an address under ``PROCTOR_PUBLIC_URL``, for the links of a mail.
"""

from __future__ import annotations

import logging
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from proctor.errors import PlatformError, UsageError
from proctor.settings import ServiceSettings, SmtpServer

TIMEOUT_S = 30.0
log = logging.getLogger(__name__)


class MailHeaderError(UsageError):
    """A header of a mail (recipient, sender, subject) holds a line break or control character."""


class MailUnavailableError(PlatformError):
    """No mail server is set, or it refused or could not be reached."""


def _header(field: str, value: str) -> str:
    """``value`` if it is one line of printable text; else ``MailHeaderError`` naming ``field``."""
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise MailHeaderError(
            f"the mail's {field} holds a line break or control character: {value!r} "
            "(a header must be one line)"
        )
    return value


def message(settings: ServiceSettings, to: str, subject: str, body: str) -> EmailMessage:
    """The mail as sent: From ``PROCTOR_MAIL_FROM``, To ``to``, the subject, a plain body."""
    mail = EmailMessage()
    mail["From"] = _header("sender (PROCTOR_MAIL_FROM)", settings.mail_from)
    mail["To"] = _header("recipient", to)
    mail["Subject"] = _header("subject", subject)
    mail["Date"] = formatdate(localtime=False)
    mail["Message-ID"] = make_msgid(domain=settings.mail_from.rpartition("@")[2] or None)
    mail.set_content(body)
    return mail


def send(settings: ServiceSettings, to: str, subject: str, body: str) -> None:
    """Send one plain-text mail to ``to``; raises ``MailHeaderError`` or ``MailUnavailableError``.

    Example: ``send(platform.settings, "ada@example.org", "Your score", "0.91 on test")``.
    """
    mail = message(settings, to, subject, body)
    if settings.smtp is None:
        raise MailUnavailableError("no mail server is set: set PROCTOR_SMTP_URL (docs/hosting.md)")
    try:
        with _connect(settings.smtp) as client:
            client.send_message(mail)
    except (OSError, smtplib.SMTPException) as error:
        where = f"{settings.smtp.host}:{settings.smtp.port}"
        raise MailUnavailableError(
            f"the mail server {where} did not take the mail: {error}"
        ) from None


def send_for_visitor(settings: ServiceSettings, to: str, subject: str, body: str) -> None:
    """``send`` for a form anyone may post: a server fault says only to try again.

    The mail server's name and answer go to the server's log, not to the visitor.
    """
    try:
        send(settings, to, subject, body)
    except MailUnavailableError as error:
        log.warning("mail to %s not sent: %s", to, error)
        raise MailUnavailableError(
            "the server could not send mail just now: try again in a few minutes"
        ) from None


def _connect(server: SmtpServer) -> smtplib.SMTP:
    """A connection to ``server``, TLS as its scheme says, logged in when it has a user."""
    context = ssl.create_default_context()
    client: smtplib.SMTP
    if server.scheme == "smtps":
        client = smtplib.SMTP_SSL(server.host, server.port, timeout=TIMEOUT_S, context=context)
    else:
        client = smtplib.SMTP(server.host, server.port, timeout=TIMEOUT_S)
    try:
        if server.scheme == "smtp+starttls":
            client.starttls(context=context)
        if server.user is not None:
            client.login(server.user, server.password or "")
    except BaseException:
        client.close()
        raise
    return client


def link(settings: ServiceSettings, path: str) -> str:
    """The address of ``path`` (``/signup/verify?t=…``) under ``PROCTOR_PUBLIC_URL``."""
    return f"{settings.public_url}{path}"
