"""Lifecycle: nothing outlives a run, the host is out of reach, privileges stay dropped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sandbox_helpers import FAST, SLOT_BASE, pids_of_uid, run_as_slot, run_py, run_sh, wait_until

from proctor.sandbox.base import MiB, Mount, RunSpec
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.cgroups import CgroupHost
from proctor.sandbox.workspace import mount_tmpfs, release_stale
from proctor.settings import Settings

pytestmark = pytest.mark.sandbox


def test_a_double_fork_daemon_dies_with_the_sandbox(sandbox: BwrapSandbox) -> None:
    outcome = run_py(
        sandbox,
        """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(60)
            os._exit(0)
        time.sleep(0.3)
        print("parent leaves")
        """,
        slot=5,
    )
    assert outcome.stdout.strip() == "parent leaves", outcome
    assert pids_of_uid(SLOT_BASE + 5) == []


WORKER = """
import sys
from pathlib import Path
from proctor.sandbox.base import Limits, RunSpec
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.runs import RunGroup
from proctor.settings import Settings
sandbox = BwrapSandbox(Settings(work_root=Path("/tmp"), slot_uid_base={base}))
sandbox.run_in_group(RunGroup(), RunSpec(["sleep", "60"], limits=Limits(wall_s=60)), slot={slot})
"""


def command_running(uid: int, name: bytes) -> bool:
    """True once a process of ``uid`` runs the program ``name`` (bwrap's setup is over)."""
    for pid in pids_of_uid(uid):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0] == name:
                return True
        except OSError:
            continue
    return False


def test_a_killed_worker_takes_its_sandbox_along(sandbox_settings: Settings) -> None:
    # Wait for the command itself: bwrap 0.8 arms its child's parent-death signal only late in
    # the setup, so a worker killed within those few milliseconds leaves the child to the
    # cgroup kill of the next worker's reconcile, not to --die-with-parent.
    slot = 6
    uid = SLOT_BASE + slot
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER.format(base=SLOT_BASE, slot=slot)],
        stdout=subprocess.DEVNULL,
    )
    try:
        assert wait_until(lambda: command_running(uid, b"sleep"), 10), "sandbox never started"
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        assert wait_until(lambda: pids_of_uid(uid) == [], 5), pids_of_uid(uid)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    # The dead worker's cgroup is a leftover; the next worker start reconciles it. Under
    # pytest-xdist another test worker's sandbox start may have reconciled it already.
    host = CgroupHost(sandbox_settings.cgroup_root)

    def leftovers() -> list[Path]:
        return [
            folder
            for parent in host.parents().values()
            for folder in parent.iterdir()
            if folder.is_dir() and folder.name.startswith(f"{worker.pid}-")
        ]

    if host.parents() and "PYTEST_XDIST_WORKER" not in os.environ:
        assert leftovers(), "a SIGKILLed worker leaves its run cgroup behind"
    host.reconcile()
    assert leftovers() == []


def test_reconcile_spares_the_cgroups_of_live_workers(sandbox_settings: Settings) -> None:
    host = CgroupHost(sandbox_settings.cgroup_root)
    if not host.parents():
        pytest.skip("no writable cgroup hierarchy on this host")
    mine = [parent / f"{os.getpid()}-reconciletest" for parent in host.parents().values()]
    for folder in mine:
        folder.mkdir(exist_ok=True)
    try:
        host.reconcile()
        assert all(folder.exists() for folder in mine)
    finally:
        for folder in mine:
            folder.rmdir()


def test_kill_minus_one_inside_leaves_the_host_untouched(sandbox: BwrapSandbox) -> None:
    slot = 7
    uid = SLOT_BASE + slot
    # A host process of the very same uid, outside the sandbox: the worst case for kill(-1).
    neighbour = subprocess.Popen(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", "sleep", "30"]
    )
    try:
        time.sleep(0.1)
        outcome = run_py(
            sandbox,
            """
            import os, signal
            try:
                os.kill(-1, signal.SIGKILL)
                print("sent")
            except ProcessLookupError:
                print("no one to signal")
            """,
            slot=slot,
        )
        assert outcome.stdout.strip() in {"sent", "no one to signal"}, outcome
        assert neighbour.poll() is None, "kill(-1) reached a host process"
    finally:
        neighbour.kill()
        neighbour.wait()


@pytest.mark.parametrize(
    "script",
    [
        "mount -t tmpfs none /tmp",
        "unshare --user --map-root-user true",
        "unshare --mount true",
        "python3 -c 'import os; os.unshare(os.CLONE_NEWUSER)'",
        "python3 -c 'import os; os.unshare(os.CLONE_NEWNET)'",
        "python3 -c 'import os; os.chroot(\"/tmp\")'",
        "python3 -c 'import os; os.setuid(0)'",
    ],
)
def test_privileged_operations_are_denied(sandbox: BwrapSandbox, script: str) -> None:
    outcome = run_sh(sandbox, script + " 2>/dev/null && echo ALLOWED || echo DENIED")
    assert outcome.stdout.strip() == "DENIED", outcome


def test_no_capabilities_and_no_new_privileges(sandbox: BwrapSandbox) -> None:
    outcome = run_sh(
        sandbox, "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status"
    )
    fields = dict(line.split(":\t") for line in outcome.stdout.strip().splitlines())
    assert fields["CapEff"] == fields["CapPrm"] == fields["CapBnd"] == "0000000000000000"
    assert fields["NoNewPrivs"] == "1"


@pytest.mark.parametrize("path", ["/usr/evil", "/evil", "/etc/passwd", "/dev/evil"])
def test_writing_to_readonly_places_gets_erofs(sandbox: BwrapSandbox, path: str) -> None:
    outcome = run_py(
        sandbox,
        f"""
        import errno
        try:
            open({path!r}, "w")
            print("WROTE")
        except OSError as exc:
            print(errno.errorcode[exc.errno])
        """,
    )
    assert outcome.stdout.strip() in {"EROFS", "EACCES"}, outcome
    assert outcome.stdout.strip() == "EROFS" or path == "/etc/passwd"


def test_a_cpu_burner_reports_wall_cpu_and_peak_memory(sandbox: BwrapSandbox) -> None:
    outcome = run_py(
        sandbox,
        """
        import time
        block = bytearray(48 * 1024 * 1024)
        for i in range(0, len(block), 4096):
            block[i] = 1
        end = time.process_time() + 0.4
        while time.process_time() < end:
            pass
        """,
    )
    assert outcome.succeeded, outcome
    assert outcome.wall_s >= 0.4
    assert 0.4 <= outcome.cpu_s < outcome.wall_s + 0.5
    assert 48 * MiB <= outcome.peak_memory_bytes < 160 * MiB


@pytest.mark.parametrize(
    ("script", "exit_status", "sig"),
    [
        ("exit 0", 0, None),
        ("exit 3", 3, None),
        ("python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGTERM)'", None, 15),
    ],
)
def test_exit_status_and_signal_are_reported(
    sandbox: BwrapSandbox, script: str, exit_status: int | None, sig: int | None
) -> None:
    outcome = run_sh(sandbox, script)
    assert (outcome.exit_status, outcome.signal) == (exit_status, sig), outcome
    assert outcome.succeeded == (exit_status == 0)


def test_a_writable_workspace_belongs_to_the_slot(sandbox: BwrapSandbox, shared_dir: Path) -> None:
    with sandbox.workspace(shared_dir / "home", size_bytes=2 * MiB, slot=4) as home:
        (home / "setup.sh").write_text("echo set up > done.txt\n")
        (home / "lib").mkdir()
        (home / "lib" / "model.py").write_text("W = 1\n")
        sandbox.give_to_slot(home, slot=4)
        outcome = run_as_slot(
            sandbox,
            RunSpec(
                [
                    "sh",
                    "-c",
                    "sh setup.sh && echo ok >> lib/model.py && id -u && stat -c %U done.txt",
                ],
                mounts=[Mount(home, "/sub", writable=True)],
                limits=FAST,
                cwd="/sub",
            ),
            slot=4,
        )
        assert outcome.succeeded, outcome
        assert outcome.stdout.split() == ["1000", "sandbox"]
        assert (home / "done.txt").read_text() == "set up\n"
        assert (home / "done.txt").stat().st_uid == SLOT_BASE + 4
        assert os.path.ismount(home)
    assert not os.path.ismount(shared_dir / "home")
    assert not (shared_dir / "home").exists()


def test_workspaces_left_by_dead_workers_are_released_at_start(shared_dir: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("workspaces are tmpfs mounts only as root")
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale, live = shared_dir / "stale", shared_dir / "live"
    for folder, owner in ((stale, dead.pid), (live, os.getpid())):
        folder.mkdir()
        mount_tmpfs(folder, size_bytes=MiB, uid=SLOT_BASE, gid=SLOT_BASE, owner_pid=owner)
    try:
        assert release_stale(shared_dir) == 1
        assert not os.path.ismount(stale)
        assert os.path.ismount(live)
    finally:
        for folder in (stale, live):
            if os.path.ismount(folder):
                subprocess.run(["umount", "-l", str(folder)], check=True)
