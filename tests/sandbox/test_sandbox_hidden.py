"""Hidden data stays hidden: files, processes, environment, descriptors, other slots."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from sandbox_fixtures import ROOTS
from sandbox_helpers import FAST, run_py, run_sh, wait_until

from proctor.sandbox.base import Mount, Outcome
from proctor.sandbox.bwrap import BwrapSandbox

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.parametrize("sandbox", ROOTS, indirect=True),
]


def test_a_host_secret_file_is_absent_at_its_host_path(
    sandbox: BwrapSandbox, shared_dir: Path
) -> None:
    secret = shared_dir / "references.csv"
    secret.write_text("record,label\nA001,1\n")
    secret.chmod(0o644)  # readable by anyone on the host: only the mount set hides it
    outcome = run_py(
        sandbox,
        f"""
        try:
            open({str(secret)!r}).read()
            print("READ")
        except FileNotFoundError:
            print("ENOENT")
        """,
    )
    assert outcome.succeeded, outcome
    assert outcome.stdout.strip() == "ENOENT"


@pytest.mark.parametrize("path", ["/etc/shadow", "/etc/gshadow", "/root", "/home", "/var", "/run"])
def test_host_private_places_are_absent(sandbox: BwrapSandbox, path: str) -> None:
    outcome = run_py(sandbox, f"import os; print(os.path.lexists({path!r}))")
    assert outcome.stdout.strip() == "False", outcome


def test_proc_shows_only_the_sandbox_processes(sandbox: BwrapSandbox) -> None:
    outcome = run_py(
        sandbox,
        """
        import os
        print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
        """,
    )
    pids = eval(outcome.stdout)  # a printed list of ints
    assert 1 <= len(pids) <= 3, pids
    assert max(pids) < 10


def test_a_worker_environment_secret_is_absent(
    sandbox: BwrapSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCTOR_TEST_SECRET", "s3cr3t-token")
    outcome = run_sh(sandbox, "env")
    assert outcome.succeeded, outcome
    assert "s3cr3t-token" not in outcome.stdout
    names = {line.split("=", 1)[0] for line in outcome.stdout.splitlines()}
    assert names <= {"PATH", "HOME", "TMPDIR", "PWD", "SHLVL", "_"}


def test_given_environment_reaches_the_command(sandbox: BwrapSandbox) -> None:
    outcome = run_py(sandbox, "import os; print(os.environ['CASE'])", env={"CASE": "A001"})
    assert outcome.stdout.strip() == "A001"


def test_an_inherited_descriptor_is_not_visible(sandbox: BwrapSandbox, shared_dir: Path) -> None:
    labels = shared_dir / "labels.csv"
    labels.write_text("hidden\n")
    fd = os.open(labels, os.O_RDONLY)
    os.set_inheritable(fd, True)
    try:
        outcome = run_py(
            sandbox,
            """
            import os
            open_fds = []
            for fd in range(3, 1024):
                try:
                    os.fstat(fd)
                except OSError:
                    continue
                open_fds.append(fd)
            print(open_fds)
            """,
        )
    finally:
        os.close(fd)
    assert outcome.succeeded, outcome
    assert outcome.stdout.strip() == "[]"


PROBE = """
def probe():
    seen = []
    seen += ["tmp"] if os.path.exists("/tmp/mark") else []
    seen += ["shm"] if os.path.exists("/dev/shm/mark") else []
    seen += ["sysv"] if libc.shmget(0x5EC2E7, 0, 0) >= 0 else []
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect("\\0proctor-test-peer")
        seen.append("abstract")
    except OSError:
        pass
    return seen
"""

OWNER = (
    """
import ctypes, os, socket, time
libc = ctypes.CDLL(None, use_errno=True)
open("/tmp/mark", "w").write("a")
open("/dev/shm/mark", "w").write("a")
libc.shmget(0x5EC2E7, 4096, 0o1666)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind("\\0proctor-test-peer")
listener.listen(4)
"""
    + PROBE
    + """
print("owner sees", probe(), flush=True)
open("/signal/ready", "w").close()
for _ in range(500):
    if os.path.exists("/signal/done"):
        break
    time.sleep(0.02)
"""
)

PEER = (
    """
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
"""
    + PROBE
    + """
print("peer sees", probe())
"""
)


def test_concurrent_slots_cannot_see_each_others_files_memory_or_sockets(
    sandbox: BwrapSandbox, shared_dir: Path
) -> None:
    signal_dir = shared_dir / "signal"
    signal_dir.mkdir()
    sandbox.give_to_slot(signal_dir, slot=1)
    owner: list[Outcome] = []
    thread = threading.Thread(
        target=lambda: owner.append(
            run_py(sandbox, OWNER, slot=1, mounts=[Mount(signal_dir, "/signal", writable=True)])
        )
    )
    thread.start()
    try:
        assert wait_until((signal_dir / "ready").exists, 10), "owner never got ready"
        peer = run_py(sandbox, PEER, slot=2)
    finally:
        (signal_dir / "done").touch()
        thread.join()
    assert owner[0].stdout.strip() == "owner sees ['tmp', 'shm', 'sysv', 'abstract']", owner
    assert peer.stdout.strip() == "peer sees []", peer


def test_a_readonly_mount_is_visible_but_not_writable(
    sandbox: BwrapSandbox, shared_dir: Path
) -> None:
    data = shared_dir / "inputs"
    data.mkdir()
    (data / "case.txt").write_text("public")
    outcome = run_py(
        sandbox,
        """
        import errno
        print(open("/data/case.txt").read())
        try:
            open("/data/new.txt", "w")
        except OSError as exc:
            print(errno.errorcode[exc.errno])
        """,
        mounts=[Mount(data, "/data")],
    )
    assert outcome.stdout.split() == ["public", "EROFS"], outcome
    assert not (data / "new.txt").exists()


def test_host_wide_proc_figures_are_not_shown(sandbox: BwrapSandbox) -> None:
    """Hardening item 6: load, memory, pressure and locks of the host were visible inside."""
    code = (
        "import os\n"
        "print(open('/proc/loadavg').read().split()[:3])\n"
        "print(open('/proc/meminfo').readline().split()[1])\n"
        "print(os.listdir('/proc/pressure') if os.path.isdir('/proc/pressure') else [])\n"
        "print(len(open('/proc/locks').read()))\n"
        "print(open('/proc/uptime').read().split()[0])\n"
    )
    outcome = run_py(sandbox, code)
    assert outcome.succeeded, outcome.stderr
    load, mem_kib, pressure, locks, uptime = outcome.stdout.splitlines()
    assert load == "['0.00', '0.00', '0.00']"
    assert int(mem_kib) * 1024 == FAST.memory_bytes  # the run's own limit, not the host's RAM
    assert pressure == "[]" and locks == "0" and uptime == "0.00"
