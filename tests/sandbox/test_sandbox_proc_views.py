"""Host-wide ``/proc`` counters: a run sees its own view, never a neighbour's activity.

Issue 15, finding 4: a job forked in timed slots and a concurrent job of the same team read the
forks back from ``/proc/stat``'s ``processes``. Every host-wide figure a run can read is either
synthetic (the run's own view) or unreadable; pid folders, ``/proc/self`` and the run's own
network and IPC namespaces are its own.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path

import pytest
from sandbox_fixtures import ROOTS
from sandbox_helpers import FAST, SLOT_BASE, is_root, run_as_slot, run_py, wait_until

from proctor.sandbox.base import Mount, Outcome, RunSpec
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings

pytestmark = [pytest.mark.sandbox]

SNAPSHOT = r"""
import json, os, sys, time
OWN = {"self", "thread-self", "net", "sysvipc"}  # the run's own pid, net and IPC namespaces
RANDOM = {"/proc/sys/kernel/random/uuid"}  # fresh on every read, driven by nobody
def snapshot():
    seen = {}
    stack = ["/proc"]
    while stack:
        folder = stack.pop()
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if folder == "/proc" and (name.isdigit() or name in OWN) or path in RANDOM:
                continue
            if os.path.islink(path):
                continue
            if os.path.isdir(path):
                stack.append(path)
                continue
            try:
                with open(path, "rb") as handle:
                    seen[path] = handle.read(1 << 20).decode("latin-1")
            except OSError:
                pass
    return seen
"""

READER = (
    SNAPSHOT
    + r"""
before = snapshot()
open("/signal/reader-ready", "w").close()
while not os.path.exists("/signal/writer-done"):
    time.sleep(0.01)
after = snapshot()
changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
print(json.dumps(changed))
"""
)

WRITER = r"""
import os
for _ in range(300):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
handles = [open("/tmp/f%d" % i, "w") for i in range(40)]
block = bytearray(64 << 20)
print("forked")
"""


@pytest.mark.parametrize("sandbox", ROOTS, indirect=True)
def test_a_reader_sees_none_of_a_concurrent_writers_forks(
    sandbox: BwrapSandbox, shared_dir: Path
) -> None:
    """No file of ``/proc`` outside the run's own namespaces changes while a neighbour forks."""
    signal_dir = shared_dir / "signal"
    signal_dir.mkdir()
    sandbox.give_to_slot(signal_dir, slot=1)
    reader: list[Outcome] = []
    mounts = [Mount(signal_dir, "/signal", writable=True)]
    thread = threading.Thread(
        target=lambda: reader.append(run_py(sandbox, READER, slot=1, mounts=mounts))
    )
    thread.start()
    try:
        assert wait_until((signal_dir / "reader-ready").exists, 10), "the reader never got ready"
        writer = run_py(sandbox, WRITER, slot=2)
        assert writer.stdout.strip() == "forked", writer
    finally:
        (signal_dir / "writer-done").touch()
        thread.join()
    assert reader[0].succeeded, reader[0]
    changed = json.loads(reader[0].stdout)
    assert changed == [], changed


HOST_WIDE = [
    "/proc/stat",
    "/proc/vmstat",
    "/proc/interrupts",
    "/proc/softirqs",
    "/proc/diskstats",
    "/proc/partitions",
    "/proc/schedstat",
    "/proc/zoneinfo",
    "/proc/buddyinfo",
    "/proc/slabinfo",
    "/proc/pagetypeinfo",
    "/proc/swaps",
    "/proc/cgroups",
    "/proc/key-users",
    "/proc/locks",
    "/proc/loadavg",
    "/proc/meminfo",
    "/proc/uptime",
    "/proc/timer_list",
    "/proc/vmallocinfo",
    "/proc/sys/fs/file-nr",
    "/proc/sys/fs/inode-nr",
    "/proc/sys/fs/inode-state",
    "/proc/sys/fs/dentry-state",
    "/proc/sys/fs/aio-nr",
    "/proc/sys/fs/quota",
    "/proc/sys/kernel/random/entropy_avail",
    "/proc/sys/kernel/pty/nr",
    "/proc/pressure",
    "/proc/fs",
    "/proc/irq",
]

SHOWN_AS = r"""
import json, os, sys
def shown_as(path):
    shown_over = {line.split()[4] for line in open("/proc/self/mountinfo")}
    if not os.path.exists(path):
        return "absent"
    if path in shown_over:
        return "masked"
    if os.path.isdir(path):
        return "readable" if os.listdir(path) else "empty"
    try:
        open(path, "rb").read(1)
        return "readable"
    except OSError:
        return "unreadable"
print(json.dumps({path: shown_as(path) for path in sys.argv[1:]}))
"""
HIDDEN = {"absent", "masked", "empty", "unreadable"}


@pytest.mark.parametrize("path", HOST_WIDE)
def test_each_host_wide_proc_file_is_masked_or_unreadable(sandbox: BwrapSandbox, path: str) -> None:
    """Read through procfs, the file would show the whole host: the run's own stands over it."""
    outcome = run_as_slot(
        sandbox, RunSpec(["python3", "-c", SHOWN_AS, path], mounts=(), limits=FAST), slot=0
    )
    assert outcome.succeeded, outcome
    assert json.loads(outcome.stdout)[path] in HIDDEN


def test_under_a_tiny_file_size_limit_the_counters_are_masked_empty(sandbox: BwrapSandbox) -> None:
    """Bubblewrap writes each synthetic file under the run's RLIMIT_FSIZE: too big, it is empty."""
    limits = dataclasses.replace(FAST, file_size_bytes=120)  # /etc/passwd (112) fits
    code = "import os; print(len(open('/proc/stat').read()), len(open('/proc/loadavg').read()))"
    outcome = run_as_slot(
        sandbox, RunSpec(["python3", "-c", code], mounts=(), limits=limits), slot=0
    )
    assert outcome.succeeded, outcome
    assert outcome.stdout.split() == ["0", "21"]


@pytest.mark.skipif(not is_root(), reason="case servers need root (slot uids, cgroups)")
def test_a_served_case_gets_the_same_views(shared_dir: Path) -> None:
    """Cases run on a session's case server see the same masked ``/proc`` as a single run."""
    server = BwrapSandbox(Settings(work_root=shared_dir / "work", slot_uid_base=SLOT_BASE + 90))
    with server.session() as session:
        session.run_case(
            RunSpec(["/bin/true"], mounts=[], limits=FAST)
        )  # starts the configuration's server
        outcome = session.run_case(
            RunSpec(["python3", "-c", SHOWN_AS, *HOST_WIDE], mounts=[], limits=FAST)
        )
    assert outcome.succeeded, outcome
    shown = json.loads(outcome.stdout)
    assert {path: how for path, how in shown.items() if how not in HIDDEN} == {}
