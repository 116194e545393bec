"""The mailer sends through a real SMTP server, and no typed text can add a mail header."""

from __future__ import annotations

from pathlib import Path

import pytest
from smtp_fixtures import Mailbox, mail_settings, tls_mailbox

from proctor.errors import UsageError
from proctor.services.platform import mail
from proctor.settings import ServiceSettings, SmtpServer


def test_a_mail_reaches_the_smtp_server_with_its_sender_subject_and_body(
    mailbox: Mailbox,
) -> None:
    settings = ServiceSettings(**mail_settings(mailbox))
    mail.send(settings, "ada@example.org", "Your score", "0.91 on test\n")
    got = mailbox.wait("ada@example.org")
    assert got["From"] == "proctor@example.org"
    assert got["Subject"] == "Your score"
    assert mailbox.body(got) == "0.91 on test\n"


@pytest.mark.parametrize(
    ("to", "subject"),
    [
        ("ada@example.org", "hi\r\nBcc: eve@example.org"),
        ("ada@example.org", "hi\nBcc: eve@example.org"),
        ("ada@example.org\r\nBcc: eve@example.org", "hi"),
        ("ada@example.org", "hi\rX-Injected: 1"),
    ],
)
def test_a_line_break_in_a_recipient_or_subject_is_refused_and_nothing_is_sent(
    mailbox: Mailbox, to: str, subject: str
) -> None:
    settings = ServiceSettings(**mail_settings(mailbox))
    with pytest.raises(mail.MailHeaderError, match="line break"):
        mail.send(settings, to, subject, "body")
    mail.send(settings, "check@example.org", "after", "body")  # the server saw only this one
    mailbox.wait("check@example.org")
    assert [rcpts for rcpts, _ in mailbox.mails] == [["check@example.org"]]


def test_a_sender_with_a_line_break_is_refused() -> None:
    settings = ServiceSettings(mail_from="p@example.org\nBcc: eve@example.org")
    with pytest.raises(mail.MailHeaderError, match="PROCTOR_MAIL_FROM"):
        mail.message(settings, "ada@example.org", "hi", "body")


def test_without_a_mail_server_sending_says_which_setting_to_set() -> None:
    with pytest.raises(mail.MailUnavailableError, match="PROCTOR_SMTP_URL"):
        mail.send(ServiceSettings(), "ada@example.org", "hi", "body")


def test_a_server_that_does_not_answer_is_a_platform_fault_naming_it() -> None:
    settings = ServiceSettings(smtp=SmtpServer.parse("smtp://127.0.0.1:9"))
    with pytest.raises(mail.MailUnavailableError, match=r"127\.0\.0\.1:9"):
        mail.send(settings, "ada@example.org", "hi", "body")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("smtp://mail.example:2525", SmtpServer("smtp", "mail.example", 2525)),
        ("smtp://mail.example", SmtpServer("smtp", "mail.example", 25)),
        (
            "smtp+starttls://ada%40x:p%3Ass@mail.example:587",
            SmtpServer("smtp+starttls", "mail.example", 587, "ada@x", "p:ss"),
        ),
        ("smtps://u:p@mail.example", SmtpServer("smtps", "mail.example", 465, "u", "p")),
    ],
)
def test_smtp_urls_of_each_form_are_read(url: str, expected: SmtpServer) -> None:
    assert ServiceSettings.from_env({"PROCTOR_SMTP_URL": url}).smtp == expected


@pytest.mark.parametrize("url", ["http://mail.example", "smtp://", "mail.example:25"])
def test_a_bad_smtp_url_names_the_setting_and_its_forms(url: str) -> None:
    with pytest.raises(UsageError, match=r"PROCTOR_SMTP_URL.*smtp\+starttls://"):
        ServiceSettings.from_env({"PROCTOR_SMTP_URL": url})


def test_a_bad_smtp_url_message_hides_the_password() -> None:
    with pytest.raises(UsageError) as raised:
        ServiceSettings.from_env({"PROCTOR_SMTP_URL": "smtpx://u:secret@mail.example"})
    assert "secret" not in str(raised.value)


def test_sign_up_needs_a_mail_server_and_takes_only_its_three_modes() -> None:
    assert ServiceSettings.from_env({}).signup == "closed"
    with pytest.raises(UsageError, match="PROCTOR_SMTP_URL"):
        ServiceSettings.from_env({"PROCTOR_SIGNUP": "open"})
    with pytest.raises(UsageError, match="open, approval, closed"):
        ServiceSettings.from_env({"PROCTOR_SIGNUP": "yes", "PROCTOR_SMTP_URL": "smtp://m"})
    env = {"PROCTOR_SIGNUP": "approval", "PROCTOR_SMTP_URL": "smtp://m:25"}
    assert ServiceSettings.from_env(env).signup == "approval"


def test_the_public_url_is_the_base_of_links_and_must_be_a_web_address() -> None:
    env = {"PROCTOR_PUBLIC_URL": "https://proctor.example/"}
    settings = ServiceSettings.from_env(env)
    assert mail.link(settings, "/login") == "https://proctor.example/login"
    with pytest.raises(UsageError, match="PROCTOR_PUBLIC_URL"):
        ServiceSettings.from_env({"PROCTOR_PUBLIC_URL": "proctor.example"})


def test_pages_name_the_server_by_the_public_url_only_when_the_operator_set_it() -> None:
    browser_used = "http://10.0.0.5:8000/"
    set_by_operator = ServiceSettings.from_env({"PROCTOR_PUBLIC_URL": "https://proctor.example"})
    assert set_by_operator.link_base(browser_used) == "https://proctor.example"
    unset = ServiceSettings.from_env({})
    assert unset.public_url == "http://127.0.0.1:8000"  # mails still need a base
    assert unset.link_base(browser_used) == "http://10.0.0.5:8000"


@pytest.mark.parametrize("scheme", ["smtp+starttls", "smtps"])
def test_mail_goes_over_starttls_or_tls_with_a_login(tmp_path: Path, scheme: str) -> None:
    with tls_mailbox(tmp_path, scheme, "proctor@example.org", "p:ss w") as box:
        url = f"{scheme}://proctor%40example.org:p%3Ass%20w@127.0.0.1:{box.port}"
        settings = ServiceSettings(smtp=SmtpServer.parse(url), mail_from="proctor@example.org")
        mail.send(settings, "ada@example.org", "over TLS", "body")
        assert box.wait("ada@example.org")["Subject"] == "over TLS"


def test_a_visitor_is_not_told_the_mail_servers_name_when_it_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = ServiceSettings(smtp=SmtpServer.parse("smtp://127.0.0.1:9"))
    with pytest.raises(mail.MailUnavailableError) as raised:
        mail.send_for_visitor(settings, "ada@example.org", "hi", "body")
    assert "127.0.0.1" not in str(raised.value) and "try again" in str(raised.value)
    assert "127.0.0.1:9" in caplog.text
