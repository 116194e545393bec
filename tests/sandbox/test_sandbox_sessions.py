"""Sessions on real bubblewrap: a slot each, and cancelling one never touches another."""

from __future__ import annotations

import dataclasses
import fcntl
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from sandbox_helpers import FAST, SLOT_BASE, is_root, pids_of_uid, wait_until

from proctor.sandbox.base import CANCELLED, MiB, Mount, Outcome, RunSpec, SandboxSession
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.process import ProcessSandbox
from proctor.settings import Settings

pytestmark = pytest.mark.sandbox

# Slot uids of their own: other sandbox tests use SLOT_BASE + 0..9 without claiming them.
SESSION_UID_BASE = SLOT_BASE + 40
LONG = dataclasses.replace(FAST, wall_s=60.0)
MARK_THEN_SLEEP = 'touch /w/started && exec sleep "$1"'


@pytest.fixture
def session_sandbox(shared_dir: Path) -> BwrapSandbox:
    return BwrapSandbox(Settings(work_root=shared_dir / "work", slot_uid_base=SESSION_UID_BASE))


def sleep_marked(session: SandboxSession, home: Path, seconds: float) -> Outcome:
    """Write ``/w/started`` once the sandbox is up, then sleep ``seconds``."""
    return session.run(
        RunSpec(
            ["sh", "-c", MARK_THEN_SLEEP, "sh", str(seconds)],
            mounts=[Mount(home, "/w", writable=True)],
            limits=LONG,
        )
    )


def test_cancelling_one_session_kills_only_its_own_run(
    session_sandbox: BwrapSandbox, shared_dir: Path
) -> None:
    with ExitStack() as stack, ThreadPoolExecutor(2, thread_name_prefix="case") as pool:
        doomed = stack.enter_context(session_sandbox.session())
        survivor = stack.enter_context(session_sandbox.session())
        doomed_home = stack.enter_context(doomed.workspace(shared_dir / "a", size_bytes=MiB))
        survivor_home = stack.enter_context(survivor.workspace(shared_dir / "b", size_bytes=MiB))
        long = pool.submit(sleep_marked, doomed, doomed_home, 30)
        short = pool.submit(sleep_marked, survivor, survivor_home, 2.5)
        marks = [doomed_home / "started", survivor_home / "started"]
        assert wait_until(lambda: all(m.exists() for m in marks), 10), "no sandbox started"
        doomed.cancel()
        killed = long.result(timeout=10)
        finished = short.result(timeout=20)
        assert doomed.cancelled and not survivor.cancelled
        if is_root():
            assert pids_of_uid(SESSION_UID_BASE + doomed.slot) == []
    assert (killed.exit_status, killed.signal, killed.notes) == (None, 9, ("cancelled",)), killed
    assert killed.wall_s < 2.5
    assert finished.succeeded, finished
    assert finished.wall_s >= 2.5
    assert "cancelled" not in finished.notes


def test_a_run_after_cancel_returns_cancelled_without_launching(
    session_sandbox: BwrapSandbox, shared_dir: Path
) -> None:
    with (
        session_sandbox.session() as session,
        session.workspace(shared_dir / "home", size_bytes=MiB) as home,
    ):
        session.cancel()
        outcome = session.run(
            RunSpec(
                ["sh", "-c", "touch /w/ran"], mounts=[Mount(home, "/w", writable=True)], limits=FAST
            )
        )
        assert outcome == CANCELLED
        assert not (home / "ran").exists()


@pytest.mark.parametrize("delay_s", [0.0, 0.002, 0.01, 0.03, 0.1])
def test_a_run_still_launching_when_its_session_is_cancelled_is_killed_too(
    session_sandbox: BwrapSandbox, delay_s: float
) -> None:
    session_sandbox.check()  # the one-time probe would otherwise take the whole delay
    with ThreadPoolExecutor(1) as pool, session_sandbox.session() as session:
        future = pool.submit(session.run, RunSpec(["sleep", "30"], limits=LONG))
        time.sleep(delay_s)
        session.cancel()
        outcome = future.result(timeout=10)
    assert (outcome.exit_status, outcome.signal) == (None, 9), outcome
    assert "cancelled" in outcome.notes


def test_a_run_whose_session_is_cancelled_while_it_spawns_is_killed(
    session_sandbox: BwrapSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_sandbox.check()
    real_popen = subprocess.Popen
    with ThreadPoolExecutor(1) as pool, session_sandbox.session() as session:

        def spawn_then_cancel(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
            process = real_popen(*args, **kwargs)
            session.cancel()  # after the check before launch, before the run joins its group
            return process

        monkeypatch.setattr(subprocess, "Popen", spawn_then_cancel)
        future = pool.submit(session.run, RunSpec(["sleep", "30"], limits=LONG))
        outcome = future.result(timeout=10)
    assert (outcome.signal, outcome.notes) == (9, ("cancelled",)), outcome


def test_two_sessions_entered_at_once_get_different_slots_and_free_them_on_leaving(
    session_sandbox: BwrapSandbox,
) -> None:
    locks = session_sandbox.settings.slot_locks
    with session_sandbox.session() as first, session_sandbox.session() as second:
        assert first.slot != second.slot
        taken = {first.slot, second.slot}
        assert not any(_free(locks / f"slot-{slot}.lock") for slot in taken)
    assert all(_free(locks / f"slot-{slot}.lock") for slot in taken)


def _free(lock: Path) -> bool:
    """Whether nobody holds the slot lock file ``lock`` (slots are claimed in random order)."""
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # closing drops a lock taken here
    return True


def test_leaving_a_session_cancels_it(session_sandbox: BwrapSandbox) -> None:
    with session_sandbox.session() as session:
        assert not session.cancelled
    assert session.cancelled
    assert session.run(RunSpec(["true"], mounts=[], limits=FAST)) == CANCELLED


def test_a_session_runs_as_its_slot_uid(session_sandbox: BwrapSandbox, shared_dir: Path) -> None:
    with (
        session_sandbox.session() as session,
        session.workspace(shared_dir / "home", size_bytes=MiB) as home,
    ):
        (home / "given.txt").write_text("host\n")
        session.give(home)
        outcome = session.run(
            RunSpec(
                ["sh", "-c", "echo entry >> given.txt"],
                mounts=[Mount(home, "/w", writable=True)],
                limits=FAST,
                cwd="/w",
            )
        )
        assert outcome.succeeded, outcome
        assert (home / "given.txt").read_text() == "host\nentry\n"
        if is_root():
            assert (home / "given.txt").stat().st_uid == SESSION_UID_BASE + session.slot


def test_the_process_backend_cancels_a_session_the_same_way(shared_dir: Path) -> None:
    settings = Settings(work_root=shared_dir, sandbox_backend="process", allow_unsandboxed=True)
    backend = ProcessSandbox(settings)
    with ThreadPoolExecutor(1) as pool, backend.session() as session:
        # The process backend translates whole arguments only, not paths inside a script.
        argv = ["sh", "-c", 'touch "$1" && exec sleep 30', "sh", "/w/started"]
        mounts = [Mount(shared_dir, "/w", writable=True)]
        future = pool.submit(session.run, RunSpec(argv, mounts=mounts, limits=LONG))
        assert wait_until((shared_dir / "started").exists, 5), future
        session.cancel()
        outcome = future.result(timeout=10)
        assert session.run(RunSpec(["true"], mounts=[], limits=FAST)) == CANCELLED
    assert (outcome.signal, outcome.notes) == (9, ("cancelled",)), outcome
