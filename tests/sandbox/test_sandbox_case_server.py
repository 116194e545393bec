"""Case servers on real bubblewrap: per-case limits from outside, nothing outlives a case.

``SandboxSession.run_case`` starts each case from one sandbox per session and configuration;
these tests check that what a single run guarantees still holds case by case.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sandbox_helpers import FAST, SLOT_BASE, is_root, pids_of_uid, wait_until

from proctor.sandbox import case_pool, case_server
from proctor.sandbox.base import MiB, Mount, Outcome, RunSpec, SandboxSession
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not is_root(), reason="case servers need root (slot uids, cgroups)"),
]

# Slot uids of their own: other sandbox tests use SLOT_BASE + 0..9 and + 40 onwards.
SERVER_UID_BASE = SLOT_BASE + 80
LISTING = 'for p in /proc/[0-9]*; do read c < "$p/comm"; echo "${p#/proc/} $c"; done'


@pytest.fixture
def server_sandbox(shared_dir: Path) -> BwrapSandbox:
    return BwrapSandbox(Settings(work_root=shared_dir / "work", slot_uid_base=SERVER_UID_BASE))


@pytest.fixture
def session(server_sandbox: BwrapSandbox) -> Iterator[SandboxSession]:
    with server_sandbox.session() as opened:
        yield opened


def case(session: SandboxSession, script: str, *, warm: bool = True, **limits: float) -> Outcome:
    """One case (a shell script) under FAST limits with the given changes.

    ``warm``: run ``/bin/true`` with the same configuration first, so that the case itself
    runs on the configuration's server (the first case of one runs in a sandbox of its own).
    """
    changed = dataclasses.replace(FAST, **limits)
    if warm:
        session.run_case(RunSpec(["/bin/true"], mounts=[], limits=changed))
    return session.run_case(RunSpec(["/bin/sh", "-c", script], mounts=[], limits=changed))


def processes(listing: str) -> dict[int, str]:
    """Pid → command name of the ``LISTING`` output."""
    rows = (line.split(" ", 1) for line in listing.splitlines())
    return {int(pid): name for pid, name in rows}


def live_servers(uid: int) -> list[int]:
    """Host pids of ``uid``'s running (not exited) python3 processes: its case servers."""
    found = []
    for pid in pids_of_uid(uid):
        try:
            comm = Path(f"/proc/{pid}/comm").read_text()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if comm == "python3\n" and state not in ("Z", "X"):
            found.append(pid)
    return found


def test_cases_of_a_session_run_on_one_server_as_pid_one(session: SandboxSession) -> None:
    first, second, third = (case(session, LISTING, warm=False) for _ in range(3))
    assert first.succeeded and second.succeeded and third.succeeded, (first, second, third)
    # the first case of a configuration runs in a sandbox of its own while its server boots
    assert processes(first.stdout)[1] != "python3", first
    assert processes(second.stdout)[1] == processes(third.stdout)[1] == "python3"


def test_cases_with_their_own_budgets_and_clocks_share_one_server(
    session: SandboxSession,
) -> None:
    """Wall clock, CPU budget and clock pipe are per case: they do not start a new server."""
    started = "cut -d' ' -f22 /proc/1/stat; echo clock=${PROCTOR_CLOCK_FD:-none}"
    plain = case(session, started, wall_s=5.0)
    clocked = case(session, started, wall_s=3.0, cpu_s=2.0, start_s=4.0)
    assert plain.succeeded and clocked.succeeded, (plain, clocked)
    assert plain.stdout.split()[0] == clocked.stdout.split()[0]  # pid 1's start time
    assert plain.stdout.split()[1] == "clock=none" and clocked.stdout.split()[1] == "clock=3"


def test_a_case_that_never_starts_its_clock_is_killed_at_start_s_with_what_it_started(
    session: SandboxSession,
) -> None:
    outcome = case(session, "sleep 60 & sleep 60", wall_s=30.0, start_s=1.0)
    assert outcome.timed_out and outcome.clock_started_s is None and outcome.wall_s < 4.0
    names = processes(case(session, LISTING, start_s=1.0).stdout)
    assert "sleep" not in names.values(), names


def test_a_spinning_case_is_killed_at_its_limit_and_the_next_runs_normally(
    session: SandboxSession,
) -> None:
    spun = case(session, "while :; do :; done", wall_s=1.0)
    assert spun.timed_out and spun.signal == 9, spun
    assert 1.0 <= spun.wall_s < 6.0
    following = case(session, "echo fine")
    assert following.succeeded and following.stdout == "fine\n", following
    assert not following.timed_out


def test_a_background_process_left_by_a_case_is_killed_at_its_end(
    session: SandboxSession,
) -> None:
    left = case(session, "setsid sleep 60 </dev/null >/dev/null 2>&1 & sleep 60 >/dev/null &")
    assert left.succeeded, left
    names = processes(case(session, LISTING).stdout)
    assert "sleep" not in names.values(), names
    assert sorted(set(names.values())) == ["python3", "sh"], names


def test_a_case_over_its_memory_is_reported_and_the_next_case_has_all_of_it(
    session: SandboxSession,
) -> None:
    grow = "python3 -c 'b = bytearray(200 * 1024 * 1024); print(len(b))'"
    over = case(session, grow, memory_bytes=128 * MiB)
    assert over.memory_exceeded and not over.succeeded, over
    fits = case(session, grow, memory_bytes=256 * MiB)
    assert fits.succeeded and fits.stdout.strip() == str(200 * MiB), fits


def test_a_fork_bomb_is_capped_per_case(session: SandboxSession) -> None:
    bomb = case(
        session, "i=0; while [ $i -lt 100 ]; do sleep 5 & i=$((i+1)); done; wait", processes=16
    )
    assert not bomb.succeeded, bomb
    assert case(session, "echo after").stdout == "after\n"


def test_cases_of_two_jobs_share_nothing(server_sandbox: BwrapSandbox, shared_dir: Path) -> None:
    with server_sandbox.session() as one, server_sandbox.session() as two:
        assert one.slot != two.slot
        wrote = case(one, "echo secret > /tmp/note && echo $$ > /dev/shm/pid && echo ok")
        assert wrote.succeeded, wrote
        looked = case(two, "cat /tmp/note /dev/shm/pid 2>&1; ls /tmp /dev/shm")
        assert "secret" not in looked.stdout, looked
        assert processes(case(two, LISTING).stdout)[1] == "python3"
        assert case(one, "ls -A /tmp /dev/shm").stdout == "/dev/shm:\n\n/tmp:\n"
    uids = [SERVER_UID_BASE + one.slot, SERVER_UID_BASE + two.slot]
    # servers end with their session (their exited processes may take a moment to be reaped)
    assert wait_until(lambda: all(pids_of_uid(uid) == [] for uid in uids), 5.0)


def test_a_case_sees_its_mounts_and_environment_and_writes_through_them(
    session: SandboxSession, shared_dir: Path
) -> None:
    home = shared_dir / "home"
    home.mkdir()
    session.give(home)
    outcome = session.run_case(
        RunSpec(
            ["/bin/sh", "-c", 'echo "$GREETING" > out.txt; pwd'],
            mounts=[Mount(home, "/entry", writable=True)],
            limits=FAST,
            env={"GREETING": "hello"},
            cwd="/entry",
        )
    )
    assert outcome.succeeded and outcome.stdout == "/entry\n", outcome
    assert (home / "out.txt").read_text() == "hello\n"


def test_a_cancelled_session_kills_its_running_case(session: SandboxSession) -> None:
    from threading import Timer

    Timer(0.5, session.cancel).start()
    killed = case(session, "sleep 30", wall_s=30.0)
    assert killed.signal == 9 and "cancelled" in killed.notes, killed
    assert case(session, "echo no").notes == ("cancelled",)


def test_every_case_starts_with_an_empty_tmp_whatever_the_last_one_left(
    session: SandboxSession,
) -> None:
    messy = (
        "mkdir -p /tmp/a/b && touch /tmp/a/b/f /tmp/.hidden /dev/shm/s && chmod 0 /tmp/a/b /tmp/a"
    )
    assert case(session, messy).succeeded
    listed = case(session, "ls -A /tmp /dev/shm")
    assert listed.stdout == "/dev/shm:\n\n/tmp:\n", listed


def test_a_case_whose_server_died_still_runs_and_the_next_gets_a_new_server(
    session: SandboxSession,
) -> None:
    first = case(session, "echo $PPID")
    assert first.succeeded, first
    uid = SERVER_UID_BASE + session.slot
    # servers of earlier sessions of this slot may still be being reaped
    assert wait_until(lambda: len(live_servers(uid)) == 1, 5.0), live_servers(uid)
    servers = live_servers(uid)
    os.kill(servers[0], signal.SIGKILL)
    again = case(session, "echo again", warm=False)
    assert again.succeeded and again.stdout == "again\n", again
    assert any(note.startswith("case server failed") for note in again.notes), again
    assert processes(case(session, LISTING).stdout)[1] == "python3"


def test_where_no_server_can_start_every_case_runs_in_a_sandbox_of_its_own(
    session: SandboxSession, shared_dir: Path
) -> None:
    # a root without a runnable python3 (the server's interpreter): the first case runs in a
    # sandbox of its own while the server starts, the second finds out, the later ones do not
    # try again
    blank = shared_dir / "not-python3"
    blank.write_text("")
    mounts = [Mount(blank, "/usr/bin/python3")]
    outcomes = [
        session.run_case(RunSpec(["/bin/sh", "-c", "echo ok"], mounts=mounts, limits=FAST))
        for _ in range(4)
    ]
    assert all(o.succeeded and o.stdout == "ok\n" for o in outcomes), outcomes
    assert any(note.startswith("case server failed") for note in outcomes[1].notes), outcomes[1]
    for later in (outcomes[0], *outcomes[2:]):
        assert not any(note.startswith("case server failed") for note in later.notes), later


def test_a_case_holds_no_descriptor_of_the_server_whatever_its_open_files_limit(
    server_sandbox: BwrapSandbox,
) -> None:
    """The control socket keeps the host's (high) number: it must be closed below any limit."""
    spare = [os.open("/dev/null", os.O_RDONLY) for _ in range(200)]
    try:
        with server_sandbox.session() as session:
            listed = case(session, "ls /proc/self/fd", open_files=16)
    finally:
        for fd in spare:
            os.close(fd)
    assert listed.succeeded, listed
    assert set(listed.stdout.split()) <= {"0", "1", "2", "3"}, listed.stdout  # 3: ls's own


SHMGET = (
    "python3 -c 'import ctypes; libc = ctypes.CDLL(None); "
    "ident = libc.shmget(0, 8 << 20, 0o1000 | 0o600); print(ident)'"
)


def test_system_v_shared_memory_of_a_case_is_gone_before_the_next(session: SandboxSession) -> None:
    made = case(session, SHMGET)
    assert made.succeeded and int(made.stdout) >= 0, made
    left = case(session, "tail -n +2 /proc/sysvipc/shm /proc/sysvipc/msg /proc/sysvipc/sem")
    assert left.succeeded, left
    assert [line for line in left.stdout.splitlines() if line and "==>" not in line] == []


def test_configurations_used_in_turn_keep_their_own_servers(
    session: SandboxSession, shared_dir: Path
) -> None:
    """python_model's parallel datasets: each dataset's second run finds its first's server."""
    started = "cut -d' ' -f22 /proc/1/stat"
    folders = [shared_dir / name for name in ("a", "b")]
    for folder in folders:
        folder.mkdir()
    seen: dict[int, list[str]] = {0: [], 1: []}
    for turn in range(6):
        mounts = [Mount(folders[turn % 2], "/data")]
        ran = session.run_case(RunSpec(["/bin/sh", "-c", started], mounts=mounts, limits=FAST))
        assert ran.succeeded, ran
        seen[turn % 2].append(ran.stdout)
    for starts in seen.values():  # the first is a sandbox of its own, then one server each
        assert len(set(starts[1:])) == 1, seen
    assert seen[0][1] != seen[1][1]


def test_a_case_that_takes_the_rights_on_tmp_away_does_not_break_the_server(
    session: SandboxSession,
) -> None:
    assert case(session, "touch /tmp/f && chmod 0 /tmp").succeeded
    after = case(session, "ls -A /tmp && touch /tmp/g && echo ok", warm=False)
    assert after.succeeded and after.stdout == "ok\n", after
    assert not any(note.startswith("case server failed") for note in after.notes), after


def test_servers_are_launched_from_a_thread_that_outlives_the_case_that_needed_them(
    session: SandboxSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A launcher dies with the thread that spawned it (setpriv --pdeathsig): servers are
    started from the pool's own long-lived thread, never from a case's or a passing one."""
    launched_from: list[threading.Thread] = []
    spawn = case_server.spawn

    def recorded(*args: Any, **kwargs: Any) -> Any:
        launched_from.append(threading.current_thread())
        return spawn(*args, **kwargs)

    monkeypatch.setattr(case_server, "spawn", recorded)
    ran: list[Outcome] = []
    thread = threading.Thread(target=lambda: ran.append(case(session, "true", warm=False)))
    thread.start()
    thread.join()
    assert ran and ran[0].succeeded, ran
    later = case(session, LISTING, warm=False)
    assert later.succeeded and processes(later.stdout)[1] == "python3", later
    assert len(launched_from) == 1 and launched_from[0].is_alive(), launched_from


def test_a_server_that_cannot_be_started_is_not_tried_again_for_every_case(
    session: SandboxSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The start runs on the pool's own thread, where an error would go unseen: whatever it
    is, the session's cases run in sandboxes of their own from then on."""
    tries: list[int] = []

    def refused(*args: Any, **kwargs: Any) -> Any:
        tries.append(1)
        raise RuntimeError("no server today")

    monkeypatch.setattr(case_pool, "CaseServer", refused)
    outcomes = [case(session, "echo ok", warm=False) for _ in range(4)]
    assert all(o.succeeded and o.stdout == "ok\n" for o in outcomes), outcomes
    assert tries == [1], tries
