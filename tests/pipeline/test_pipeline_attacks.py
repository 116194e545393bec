"""Attacks from specs/sandbox.md run by an entry on one hidden record, through the whole pipeline.

Each attack runs in ``next.sh`` for record te02 only and exits 0 only if the attack worked, so
a test fails when an attack gets through. Every test checks that the other hidden records are
still evaluated and that the report carries only counts for the exam, never output or logs.
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import WORKER_UID_OFFSET
from toy_challenge import GOOD_NEXT, make_challenge, make_entry

from proctor.pipeline.report import EvaluationReport, RunStatus
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

MARK = "ATTACK-LOG-5521"
SLOT_BASE = 64200 + WORKER_UID_OFFSET

# name -> (shell snippet that exits 0 only if the attack worked, how te02 must end)
ATTACKS: dict[str, tuple[str, str]] = {
    "read the references at their host path": ("cat {refs}/te02-arousal.mat >/dev/null", "failed"),
    "read /etc/shadow": ("cat /etc/shadow >/dev/null", "failed"),
    "list the host's processes": ("[ $(ls /proc | grep -c '^[0-9]') -gt 20 ]", "failed"),
    "connect to a host listener": (
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 1)'",
        "failed",
    ),
    "reach an outside address": (
        "python3 -c 'import socket; socket.create_connection((\"192.0.2.1\", 80), 1)'",
        "failed",
    ),
    "write to the read-only inputs": ("echo x > /data/te02.hea", "failed"),
    "fill the home with one big file": ("head -c 200000000 /dev/zero > big.bin", "failed"),
    "allocate far past the memory limit": (
        "python3 -c 'b = b\"x\" * (1536 * 1024 * 1024); print(len(b))'",
        "failed",
    ),
    "fork bomb": (
        "python3 -c '\nimport os, time\nfor _ in range(4000):\n"
        "    if os.fork() == 0:\n        time.sleep(60); os._exit(0)\n'",
        "failed",
    ),
    "sleep ignoring SIGTERM": ("trap '' TERM; sleep 60; false", "timed_out"),
    "new user namespace (nested sandbox)": ("unshare -r true", "failed"),
    # these exit 0 leaving a bad output file: the door out of the home must refuse it
    "output is a symlink to the references": ("ln -s {refs}/te02-arousal.mat te02.vec", "refused"),
    "output is a FIFO": ("mkfifo te02.vec", "refused"),
}


@pytest.fixture
def host_listener() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def attack_entry(root: Path, snippet: str, expected: str) -> Path:
    then = "exit 0" if expected == "refused" else 'exec ./good.sh "$1"'
    next_sh = f"""#!/bin/sh
case "$1" in
  te02)
    echo "{MARK} stdout"; echo "{MARK} stderr" >&2
    ( {snippet} ) >/dev/null 2>&1 && {then}
    exit 1 ;;
  *) exec ./good.sh "$1" ;;
esac
"""
    entry = make_entry(root, next_sh=next_sh, extra={"good.sh": GOOD_NEXT})
    (entry / "good.sh").chmod(0o755)
    return entry


def run(
    tmp_path: Path, shared_dir: Path, snippet: str, expected: str = "failed"
) -> EvaluationReport:
    challenge = make_challenge(tmp_path / "challenge", case_s=4)
    refs = challenge / "refs"
    entry = attack_entry(tmp_path / "entry", snippet.replace("{refs}", str(refs)), expected)
    settings = Settings(work_root=shared_dir / "runs", slot_uid_base=SLOT_BASE)
    return run_entry(RunRequest(entry, str(challenge), jobs=3), settings)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_attack_on_one_case_is_contained_and_the_others_are_evaluated(
    attack: str, tmp_path: Path, shared_dir: Path, host_listener: int
) -> None:
    snippet, expected = ATTACKS[attack]
    report = run(tmp_path, shared_dir, snippet.replace("{port}", str(host_listener)), expected)
    assert report.status is RunStatus.SCORED, report.to_json()
    exam = next(s for s in report.to_json()["stages"] if s["name"] == "exam")
    cases = exam["cases"]
    assert cases["total"] == 3
    assert cases["passed"] == 2, f"{attack} got through: {cases}"
    assert cases["failed"] == 1
    assert cases["timed_out"] == (1 if expected == "timed_out" else 0)
    assert set(exam) == {"name", "status", "message", "wall_s", "cases"}
    text = json.dumps(report.to_json())
    assert MARK not in text
    assert report.scores["arousal"]["records_zero_filled"] == 1


def test_a_daemon_left_behind_by_next_sh_does_not_outlive_its_sandbox(
    tmp_path: Path, shared_dir: Path
) -> None:
    report = run(tmp_path, shared_dir, "(setsid sh -c 'sleep 300' &) ; false")
    assert report.status is RunStatus.SCORED
    listing = subprocess.run(
        ["ps", "-eo", "pid=,uid=,stat=,args="], capture_output=True, text=True, check=True
    )
    slot_uids = {str(SLOT_BASE + i) for i in range(4)}
    survivors = [
        line
        for line in listing.stdout.splitlines()
        # zombies are dead already: only the host's init has yet to reap them
        if line.split()[1] in slot_uids and not line.split()[2].startswith("Z")
    ]
    assert survivors == []


def test_a_flood_of_stdout_is_capped_and_never_reported(tmp_path: Path, shared_dir: Path) -> None:
    report = run(tmp_path, shared_dir, f"yes {MARK} | head -c 300000000; false")
    exam = next(s for s in report.to_json()["stages"] if s["name"] == "exam")
    assert exam["cases"]["passed"] == 2
    assert MARK not in json.dumps(report.to_json())
