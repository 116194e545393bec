"""The "finished" mail: once per submission, when every job has ended, unless switched off.

Through the real job function in the sandbox and a real SMTP server; the worker's hook
(``worker_runtime``'s ``job_committed``) calls ``finished.mail_if_finished``.
"""

from __future__ import annotations

from pathlib import Path

from service_seed import run_queued, seed, submit
from smtp_fixtures import Mailbox, mail_settings
from sqlalchemy import select
from toy_challenge import make_entry

from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform import finished, profile
from proctor.services.platform.accounts import authenticate
from proctor.services.platform.worker import worker_runtime
from proctor.settings import Settings
from proctor.store.models import Job, User


def test_the_uploader_is_told_once_and_not_when_switched_off(
    shared_dir: Path, sandbox: BwrapSandbox, sandbox_settings: Settings, mailbox: Mailbox
) -> None:
    seeded = seed(shared_dir / "service", **mail_settings(mailbox))
    try:
        platform = seeded.platform
        for name in ("alice", "bob"):
            with platform.db.begin() as session:
                user = session.scalar(select(User).where(User.name == name))
                assert user is not None
                user.email, user.email_verified = f"{name}@example.org", 1.0
        profile.set_notify_finished(platform, authenticate(platform, seeded.tokens["bob"]), False)
        good = submit(seeded, "alice", make_entry(shared_dir / "good"))
        submit(seeded, "bob", make_entry(shared_dir / "bob"))
        with platform.db() as session:
            pending = session.scalars(select(Job.id).where(Job.submission_id == good)).all()
        assert not finished.mail_if_finished(platform, pending[0])  # not ended yet
        run_queued(seeded, sandbox, sandbox_settings)
        with platform.db() as session:
            jobs = session.scalars(select(Job.id).order_by(Job.id)).all()
        sent = [finished.mail_if_finished(platform, job) for job in jobs]
        assert sent.count(True) == 1  # alice's, once; bob switched it off
        told = mailbox.wait("alice@example.org")
        assert told["Subject"] == "toy: submission scored"
        assert f"http://proctor.example/submissions/{good}" in told.get_content()
        assert mailbox.to("bob@example.org") == []
        assert not any(finished.mail_if_finished(platform, job) for job in jobs)  # never twice
        assert worker_runtime(platform).job_committed is not None  # the worker's hook is wired
    finally:
        seeded.platform.close()
