"""An organizer's logs of a failed exam: the reason first, the setup output and each failing
case's output, capped with the cap said, through the service, the REST route and
``proctor logs``; participants get "no such submission" and their disclosed report only.

The submission runs for real (the bwrap sandbox, the real job function): its setup prints a
marker, and two hidden cases fail with their own marker on stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from service_seed import Seeded, run_queued, seed, served, submit
from toy_challenge import make_challenge, make_exam_entry

from proctor.errors import NotFoundError
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform import installs, logs, records, submissions
from proctor.services.platform.accounts import authenticate
from proctor.settings import Settings

pytestmark = pytest.mark.sandbox

SETUP_LOG = "SETUP-OUT-3c9e"
EXAM_LOG = "EXAM-STDERR-77b1"
PROCTOR = str(Path(sys.executable).with_name("proctor"))


@pytest.fixture
def failed_exam(
    shared_dir: Path, sandbox: BwrapSandbox, sandbox_settings: Settings
) -> tuple[Seeded, str]:
    """bob's submission whose hidden cases print to stderr and hang: with 3 s a case and 4 s
    for the exam, the exam times out (the entry's failure)."""
    seeded = seed(shared_dir / "service")
    tight = make_challenge(shared_dir / "tight" / "toy", case_s=3, stage_s=4)
    installs.install(
        seeded.platform, authenticate(seeded.platform, seeded.tokens["olga"]), str(tight)
    )
    failing = make_exam_entry(
        shared_dir / "failing", f'  te*) echo "{EXAM_LOG} $1" >&2; sleep 60 ;;'
    )
    (failing / "setup.sh").write_text(f"#!/bin/sh\necho {SETUP_LOG}\n")
    sid = submit(seeded, "bob", failing)
    run_queued(seeded, sandbox, sandbox_settings)
    return seeded, sid


def test_the_logs_lead_with_the_reason_and_carry_the_failing_cases_and_setup(
    failed_exam: tuple[Seeded, str],
) -> None:
    seeded, sid = failed_exam
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    (task,) = logs.submission_logs(seeded.platform, olga, sid).tasks
    assert task.status == "failed"
    assert task.reason is not None and task.reason.failure == "entry"
    assert task.reason.owner == "the participant's entry" and task.reason.stage == "exam"
    assert task.reason.source.startswith("exam case te0")  # the first to fail, of three at once
    assert task.reason.lines[-1] == f"{EXAM_LOG} {task.reason.source[-4:]}"
    assert task.diagnostics["prep stdout"].strip() == SETUP_LOG
    assert task.diagnostics["exam case te01 stderr"].strip() == f"{EXAM_LOG} te01"
    assert task.diagnostics["exam case te03 stderr"].strip() == f"{EXAM_LOG} te03"
    assert task.diagnostics["exam problem"].startswith("exam")
    assert "3 of 3 failing cases listed" in task.cap and "2,000 characters" in task.cap
    record = records.submission_record(seeded.platform, olga, sid)
    assert record.tasks[0].reason == task.reason  # the record leads with the same reason

    bob = authenticate(seeded.platform, seeded.tokens["bob"])
    with pytest.raises(NotFoundError):
        logs.submission_logs(seeded.platform, bob, sid)
    shown = submissions.status(seeded.platform, bob, sid).model_dump_json()
    assert EXAM_LOG not in shown and SETUP_LOG not in shown  # the disclosure, unchanged


def test_the_route_and_proctor_logs_carry_them_to_organizers_only(
    failed_exam: tuple[Seeded, str],
) -> None:
    seeded, sid = failed_exam
    with served(seeded.app) as url:
        answer = httpx.get(f"{url}/api/v1/submissions/{sid}/logs", headers=seeded.headers("olga"))
        assert answer.status_code == 200
        (task,) = answer.json()["tasks"]
        assert task["reason"]["lines"][-1].startswith(f"{EXAM_LOG} te0")
        assert task["diagnostics"]["prep stdout"].strip() == SETUP_LOG
        assert "failing cases listed" in task["cap"]
        refused = httpx.get(f"{url}/api/v1/submissions/{sid}/logs", headers=seeded.headers("bob"))
        assert refused.status_code == 404

        def cli(user: str) -> subprocess.CompletedProcess[str]:
            env = dict(os.environ, PROCTOR_SERVER=url, PROCTOR_TOKEN=seeded.tokens[user])
            return subprocess.run([PROCTOR, "logs", sid], env=env, capture_output=True,
                                  text=True, timeout=60, check=False)  # fmt: skip

        printed = cli("olga")
        assert printed.returncode == 0, printed.stderr
        lines = printed.stdout.splitlines()
        assert "entry failure in the exam stage; owner: the participant's entry" in lines
        assert lines[lines.index("--- prep stdout") + 1] == SETUP_LOG
        assert lines[lines.index("--- exam case te03 stderr") + 1] == f"{EXAM_LOG} te03"
        assert lines[-1].startswith("(kept: each log keeps its last 64 KiB")
        assert cli("bob").returncode == 5
