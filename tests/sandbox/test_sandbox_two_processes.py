"""Two Proctor processes on one host: a local ``proctor run`` while ``proctor serve`` runs jobs.

Both use the host's slots, work root and cgroups (the same ``PROCTOR_WORK_ROOT``, the default
slot locks). Jobs of the toy records challenge (on the host's tree; each case sleeps, so they
hold their homes and mounts for seconds) are served by two workers; while they run, local
runs of the same entry start, run and clean up on the same host. Every served job and every
local run must score: no process may take, chmod or remove what the other is using.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import SLOT_BASE, is_root, wait_until
from served_host import ServedHost
from service_seed import seed
from toy_challenge import GOOD_NEXT, make_challenge, make_entry

from proctor.errors import PlatformError
from proctor.executor.housekeeping import reconcile_host
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.slots import SLOT_COUNT
from proctor.settings import Settings
from proctor.store.runfolder import RunFolder, in_use

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.skipif(not is_root(), reason="slot uids, tmpfs homes and cgroups need root"),
]
PROCTOR = str(Path(sys.executable).with_name("proctor"))
SERVED_JOBS = 3
LOCAL_RUNS = 1
SLOW_NEXT = GOOD_NEXT.replace(
    "#!/bin/sh\n", '#!/bin/sh\ncase "$1" in te03) sleep 25 ;; *) sleep 2 ;; esac\n', 1
)
"""The toy entry, each case of it slow: a job holds its home for half a minute."""


@pytest.fixture
def host(tmp_path: Path) -> Iterator[ServedHost]:
    work = Path(tempfile.mkdtemp(prefix="proctor-two-", dir="/tmp"))
    work.chmod(0o755)
    env = dict(os.environ, PROCTOR_DATA=str(tmp_path / "data"), PROCTOR_WORK_ROOT=str(work),
               PROCTOR_UPLOAD_BYTES="1000000", PROCTOR_ALLOW_HOST_ENVIRONMENT="1")  # fmt: skip
    env.pop("PROCTOR_DATABASE_URL", None)
    env.pop("PROCTOR_TOKEN", None)
    found = ServedHost(env, work)
    found.add_users()
    yield found
    found.stop()
    BwrapSandbox(Settings(work_root=work)).reconcile()
    shutil.rmtree(work, ignore_errors=True)


def _mounted_homes(work_root: Path) -> list[Path]:
    """The served jobs' home workspaces mounted now (their cases are under way)."""
    return [home for home in work_root.glob("job-*.partial/homes/*") if os.path.ismount(home)]


def _status(host: ServedHost, sid: str) -> dict[str, object]:
    shown = host.cli("status", sid, "--json", user="bob")
    assert shown.returncode in (0, 1), shown.stderr
    found: dict[str, object] = json.loads(shown.stdout)
    return found


def _second_server(env: dict[str, str]) -> subprocess.Popen[str]:
    """Another deployment's ``proctor serve`` on this host (its own data, the same work root),
    once it has started (its start-up clean-up done)."""
    process = subprocess.Popen([PROCTOR, "serve", "--port", "0", "--workers", "1", "--json"],
                               env=env, stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stdout is not None
    assert json.loads(process.stdout.readline())["url"]
    process.stdout.close()
    return process


def test_a_local_run_during_served_jobs_leaves_both_scoring(
    host: ServedHost, tmp_path: Path
) -> None:
    challenge = make_challenge(tmp_path / "bundle" / "toy", case_s=30, stage_s=120)
    entry = make_entry(tmp_path / "entry", next_sh=SLOW_NEXT)
    archive = tmp_path / "entry.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for path in sorted(entry.iterdir()):
            tar.add(path, arcname=path.name)
    other_env = {key: value for key, value in host.env.items() if key != "PROCTOR_SERVER"}
    other_env["PROCTOR_DATA"] = str(tmp_path / "other-data")
    added = subprocess.run([PROCTOR, "user", "add", "otto", "--organizer", "--json"],
                           env=other_env, capture_output=True, text=True, timeout=120,
                           check=False)  # fmt: skip
    assert added.returncode == 0, added.stderr
    host.serve(workers=2)
    added = host.cli("challenge", "add", str(challenge), "--json", user="olga")
    assert added.returncode == 0, added.stderr
    sids = []
    for _ in range(SERVED_JOBS):
        queued = host.cli("submit", str(archive), "-c", "toy", "--no-wait", "--json",
                          user="bob")  # fmt: skip
        assert queued.returncode == 0, queued.stderr
        sids.append(json.loads(queued.stdout)["submission"])
    assert wait_until(lambda: bool(_mounted_homes(host.work_root)), 120)  # served jobs under way
    local = {key: value for key, value in host.env.items() if key != "PROCTOR_SERVER"}
    mounted = _mounted_homes(host.work_root)
    other = _second_server(other_env)
    for home in mounted:  # a job still under way keeps its folder as it made it
        if os.path.ismount(home):
            assert stat.S_IMODE(home.parent.stat().st_mode) == 0o711, home.parent
            assert (home / "next.sh").is_file(), sorted(os.listdir(home))
    runs = []
    for _ in range(LOCAL_RUNS):
        done = subprocess.run([PROCTOR, "run", str(entry), "-c", str(challenge), "--json"],
                              env=local, capture_output=True, text=True, timeout=280,
                              check=False)  # fmt: skip
        runs.append(done)
    other.terminate()
    assert other.wait(timeout=60) in (0, -signal.SIGTERM)
    deadline = time.monotonic() + 240
    shown: dict[str, dict[str, object]] = {}
    while time.monotonic() < deadline:
        shown = {sid: _status(host, sid) for sid in sids}
        if all(s["status"] not in ("queued", "running") for s in shown.values()):
            break
        time.sleep(0.5)
    for done in runs:
        report = json.loads(done.stdout)
        assert done.returncode == 0 and report["status"] == "scored", (done.stderr, report)
    failed = {sid: (s["status"], s.get("failure"), s.get("report")) for sid, s in shown.items()
              if s["status"] != "scored"}  # fmt: skip
    assert not failed, failed


HOLDER = """
import sys, time
from pathlib import Path
from proctor.store.runfolder import RunFolder
folder = RunFolder.create(Path(sys.argv[1]), "job-7-a1")
print(folder.root, flush=True)
time.sleep(300)
"""


def test_the_start_up_clean_up_removes_only_folders_no_live_process_holds(
    tmp_path: Path,
) -> None:
    """A job folder of another process (another deployment: its job is not in this database)
    stays while that process lives, and goes once it is dead; an abandoned one goes at once."""
    seeded = seed(tmp_path)
    work = tmp_path / "work"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(work)], stdout=subprocess.PIPE,
                              text=True, env=env)  # fmt: skip
    try:
        assert holder.stdout is not None
        held = Path(holder.stdout.readline().strip())
        abandoned = RunFolder.create(work, "job-8-a1")
        abandoned.release()  # as a crashed process leaves it: nobody holds it
        assert in_use(held) and not in_use(abandoned.root)
        reconcile_host(seeded.platform.db, work, seeded.platform.artifacts, grace_s=60.0)
        assert held.is_dir() and not abandoned.root.exists()
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    reconcile_host(seeded.platform.db, work, seeded.platform.artifacts, grace_s=60.0)
    seeded.platform.close()
    assert not held.exists()


UID_BASE = SLOT_BASE + 1500
"""Slot uids no other test (nor a real evaluation) uses: this test holds every one of them."""


def test_a_slot_uid_is_held_once_on_the_host_whatever_the_slot_lock_folder(
    tmp_path: Path,
) -> None:
    """Two processes configured with different ``PROCTOR_SLOT_LOCKS`` (and the same uids) never
    run as the same slot uid at once: with every slot of one held, the other finds none free."""
    first = BwrapSandbox(Settings(work_root=tmp_path / "work", slot_lock_dir=tmp_path / "a",
                                  slot_uid_base=UID_BASE))  # fmt: skip
    second = BwrapSandbox(Settings(work_root=tmp_path / "work", slot_lock_dir=tmp_path / "b",
                                   slot_uid_base=UID_BASE))  # fmt: skip
    with contextlib.ExitStack() as stack:
        held = {stack.enter_context(first.hold_slot()) for _ in range(SLOT_COUNT)}
        assert held == set(range(SLOT_COUNT))
        with pytest.raises(PlatformError, match="busy"), second.hold_slot():
            pass
    with second.hold_slot() as slot:  # released with their holder
        assert 0 <= slot < SLOT_COUNT
