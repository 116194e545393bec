"""Resource attacks end capped and reported: processes, threads, memory, disk, CPU, output."""

from __future__ import annotations

import dataclasses
import os
import resource
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_fixtures import ROOTS
from sandbox_helpers import (
    FAST,
    SLOT_BASE,
    is_root,
    pids_of_uid,
    run_as_slot,
    run_py,
    run_sh,
    wait_until,
)

from proctor.sandbox.base import MiB, Mount, RunSpec
from proctor.sandbox.bwrap import BwrapSandbox

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.parametrize("sandbox", ROOTS, indirect=True),
]

WORKSPACE_BYTES = 4 * MiB


@pytest.fixture
def workspace(sandbox: BwrapSandbox, shared_dir: Path) -> Iterator[Path]:
    with sandbox.workspace(shared_dir / "ws", size_bytes=WORKSPACE_BYTES, slot=3) as path:
        yield path


def quiet_slot() -> None:
    """Wait until slot 0's uid runs nothing: RLIMIT_NPROC counts every process of the uid,
    and the processes of a bomb killed by the previous test may still be exiting."""
    if is_root():
        assert wait_until(lambda: pids_of_uid(SLOT_BASE) == [], 15.0), pids_of_uid(SLOT_BASE)


@pytest.fixture(autouse=True)
def _quiet_slot_around() -> Iterator[None]:
    """Every test here starts, and leaves the next test (of any module), with slot 0 idle."""
    quiet_slot()
    yield
    quiet_slot()


def test_a_fork_bomb_is_capped_by_the_process_limit(sandbox: BwrapSandbox) -> None:
    outcome = run_py(
        sandbox,
        """
        import os, time
        children = 0
        try:
            for _ in range(10000):
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                children += 1
        except BlockingIOError:
            print("EAGAIN after", children)
        """,
        limits=dataclasses.replace(FAST, processes=16),
    )
    assert outcome.succeeded, outcome
    words = outcome.stdout.split()
    assert words[:2] == ["EAGAIN", "after"], outcome
    assert int(words[2]) <= 16


def test_a_shell_fork_bomb_ends_at_the_wall_clock(sandbox: BwrapSandbox) -> None:
    # the sleep and the bomb's subshell are forked before the bomb fills the process cap: a
    # shell that cannot fork exits at once ("Cannot fork"), so the bomb runs in a subshell of
    # its own and the outer shell reaches the wall clock in ``wait`` (a builtin: no fork)
    outcome = run_sh(
        sandbox,
        "sleep 30 & (b() { b | b & }; b) 2>/dev/null; wait",
        limits=dataclasses.replace(FAST, wall_s=1.5),
    )
    assert outcome.timed_out, outcome
    assert not outcome.succeeded
    assert outcome.wall_s < 6


def test_a_thread_bomb_is_capped(sandbox: BwrapSandbox) -> None:
    outcome = run_py(
        sandbox,
        """
        import threading, time
        started = 0
        try:
            for _ in range(10000):
                threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
                started += 1
        except RuntimeError:
            print("capped at", started, flush=True)
        import os
        os._exit(0)
        """,
        limits=dataclasses.replace(FAST, processes=16),
    )
    assert outcome.stdout.split()[:2] == ["capped", "at"], outcome
    assert int(outcome.stdout.split()[2]) <= 16


def test_a_memory_bomb_is_killed_and_reported_as_memory(sandbox: BwrapSandbox) -> None:
    outcome = run_py(
        sandbox,
        """
        chunks = []
        while True:
            chunks.append(bytearray(8 * 1024 * 1024))
        """,
        limits=dataclasses.replace(FAST, memory_bytes=96 * MiB),
    )
    assert outcome.memory_exceeded, outcome
    assert not outcome.succeeded
    assert outcome.describe() == "exceeded the memory limit"


def write_until_full(path: str, chunk_kib: int = 1024, total_mib: int = 64) -> str:
    return f"""
    import errno
    written = 0
    try:
        with open({path!r}, "wb") as f:
            for _ in range({total_mib * 1024 // chunk_kib}):
                f.write(b"x" * {chunk_kib * 1024})
                f.flush()
                written += {chunk_kib * 1024}
        print("WROTE ALL")
    except OSError as exc:
        print(errno.errorcode[exc.errno], written)
    """


def test_filling_dev_shm_is_capped(sandbox: BwrapSandbox) -> None:
    outcome = run_py(sandbox, write_until_full("/dev/shm/fill"))
    code, written = outcome.stdout.split()
    assert code == "ENOSPC", outcome
    assert int(written) <= FAST.shm_bytes


def test_filling_tmp_is_capped(sandbox: BwrapSandbox) -> None:
    outcome = run_py(sandbox, write_until_full("/tmp/fill"))
    code, written = outcome.stdout.split()
    assert code == "ENOSPC", outcome
    assert int(written) <= FAST.tmp_bytes


def test_one_big_file_fills_the_workspace_and_stops(sandbox: BwrapSandbox, workspace: Path) -> None:
    outcome = run_py(
        sandbox,
        write_until_full("/home/entry/big.bin"),
        mounts=[Mount(workspace, "/home/entry", writable=True)],
        slot=3,
    )
    code, written = outcome.stdout.split()
    assert code == "ENOSPC", outcome
    assert int(written) <= WORKSPACE_BYTES


def test_one_file_beyond_the_file_size_limit_gets_efbig(
    sandbox: BwrapSandbox, workspace: Path
) -> None:
    outcome = run_py(
        sandbox,
        write_until_full("/home/entry/big.bin"),
        mounts=[Mount(workspace, "/home/entry", writable=True)],
        slot=3,
        limits=dataclasses.replace(FAST, file_size_bytes=1 * MiB),
    )
    code, written = outcome.stdout.split()
    assert code == "EFBIG", outcome
    assert int(written) <= 1 * MiB


def test_many_small_files_fill_the_workspace_inodes(sandbox: BwrapSandbox, workspace: Path) -> None:
    outcome = run_py(
        sandbox,
        """
        import errno
        count = 0
        try:
            for count in range(100000):
                open(f"/home/entry/f{count}", "w").close()
            print("ALL", count)
        except OSError as exc:
            print(errno.errorcode[exc.errno], count)
        """,
        mounts=[Mount(workspace, "/home/entry", writable=True)],
        slot=3,
    )
    code, count = outcome.stdout.split()
    assert code == "ENOSPC", outcome
    assert int(count) < 5000


def test_an_infinite_loop_is_stopped_by_the_cpu_limit(sandbox: BwrapSandbox) -> None:
    outcome = run_py(sandbox, "while True: pass", limits=dataclasses.replace(FAST, cpu_s=1.0))
    assert outcome.timed_out, outcome
    assert "cpu time limit reached" in outcome.notes
    assert 0.9 <= outcome.cpu_s < 3.0
    assert outcome.wall_s < 4.0


def test_a_sleeper_ignoring_sigterm_is_killed_at_the_wall_clock(sandbox: BwrapSandbox) -> None:
    outcome = run_py(
        sandbox,
        """
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(60)
        """,
        limits=dataclasses.replace(FAST, wall_s=1.5),
    )
    assert outcome.timed_out, outcome
    assert outcome.signal == signal.SIGKILL
    assert 1.5 <= outcome.wall_s < 3.5
    assert outcome.describe() == "timed out"


def test_many_cpu_burners_are_stopped_by_the_cgroup_cpu_budget(sandbox: BwrapSandbox) -> None:
    outcome = run_py(
        sandbox,
        """
        import os
        for _ in range(6):
            if os.fork() == 0:
                break
        while True:
            pass
        """,
        limits=dataclasses.replace(FAST, wall_s=8.0, cpu_s=1.5),
    )
    assert outcome.timed_out, outcome
    assert outcome.cpu_s >= 1.5
    # Six burners on the host's cores reach 1.5 CPU-seconds long before the wall clock.
    assert outcome.wall_s < 4.0


def test_300_megabytes_of_stdout_are_capped_without_growing_host_memory(
    sandbox: BwrapSandbox,
) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    outcome = run_py(
        sandbox,
        """
        import sys
        block = b"y" * (1024 * 1024)
        for _ in range(300):
            sys.stdout.buffer.write(block)
        sys.stdout.flush()
        print("done", file=sys.stderr)
        """,
    )
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert outcome.succeeded, outcome
    assert outcome.output_exceeded
    assert len(outcome.stdout) == FAST.log_bytes
    assert outcome.stderr.strip() == "done"
    assert (after - before) * 1024 < 50 * MiB


def test_an_open_file_bomb_gets_emfile(sandbox: BwrapSandbox) -> None:
    outcome = run_py(
        sandbox,
        """
        import errno
        files = []
        try:
            while True:
                files.append(open("/dev/null"))
        except OSError as exc:
            print(errno.errorcode[exc.errno], len(files))
        """,
    )
    code, count = outcome.stdout.split()
    assert code == "EMFILE", outcome
    assert int(count) <= FAST.open_files


def test_a_run_spinning_many_processes_gets_about_one_core(sandbox: BwrapSandbox) -> None:
    """Hardening item 7: a neighbour that spins could push another run's cases into timeouts."""
    if not sandbox.cgroups.parents():
        pytest.skip("no writable cgroups on this host")
    if os.cpu_count() == 1:
        pytest.skip("one core: nothing to share")
    script = "for i in 1 2 3 4; do (while :; do :; done) & done; sleep 2; kill 0"
    limits = dataclasses.replace(FAST, wall_s=10, cpus=1.0)
    outcome = run_as_slot(sandbox, RunSpec(["/bin/sh", "-c", script], limits=limits))
    assert outcome.wall_s >= 2
    assert outcome.cpu_s <= outcome.wall_s * 1.0 + 0.5, outcome  # one core's worth
