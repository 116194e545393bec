"""Stopping ``proctor serve`` releases every running job's mounts, loop devices and cgroups.

Issue 15, finding 11: a SIGTERM while jobs ran left 9 mounts and 6 loop devices until a later
worker with the same work folder cleaned them up (uvicorn re-raises the signal once it has
shut down, which ended the process before the executor's clean-up). Here two jobs of the
physionet2018 challenge (its declared environment, from the shared environment store: the
root image is mounted through a loop device) sit in a setup that sleeps; the server is
stopped; what they held is counted before and after, from ``/proc/self/mountinfo``, the loop
devices' sysfs entries and the cgroup hierarchy.
"""

from __future__ import annotations

import os
import shutil
import signal
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from celery_cluster import Cluster, lease_pid, redis_unreachable, wait_for
from sandbox_helpers import is_root, wait_until
from served_host import ServedHost
from sqlalchemy import select

from proctor.challenges import bundled_root
from proctor.host import mounts
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform.installs import install
from proctor.services.platform.resources import open_platform
from proctor.settings import ServiceSettings, Settings
from proctor.store.models import Job
from proctor.types import JobState

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.skipif(not is_root(), reason="mounts, loop devices and cgroups need root"),
]
BASELINE = bundled_root() / "physionet2018" / "baseline"
LOOP_MAJOR = 7
CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass
class Held:
    """What a process's jobs hold on the host: mount points, loop devices, run cgroups."""

    mounts: list[str] = field(default_factory=list)
    loops: dict[str, str] = field(default_factory=dict)
    cgroups: list[str] = field(default_factory=list)


def held(work_root: Path, pid: int, loops: dict[str, str] | None = None) -> Held:
    """Mounts below ``work_root``, their loop devices (or those of ``loops`` still attached to
    the same file and not mounted by another job since), and the run cgroups named after
    ``pid``."""
    root = str(work_root.resolve())
    points = [m.point for m in mounts() if m.point.startswith(root + "/")]
    found = Held(points)
    for point in points:
        with_dev = os.stat(point).st_dev
        if os.major(with_dev) == LOOP_MAJOR:
            name = f"loop{os.minor(with_dev)}"
            found.loops[name] = _backing(name)
    elsewhere = {
        fields[2]
        for fields in (
            line.split() for line in Path("/proc/self/mountinfo").read_text().splitlines()
        )
        if not fields[4].startswith(root + "/")
    }
    for name, backing in (loops or {}).items():
        reused = f"{LOOP_MAJOR}:{name.removeprefix('loop')}" in elsewhere  # by another job
        if _backing(name) == backing and not reused:
            found.loops[name] = backing
    found.cgroups = _run_cgroups(pid)
    return found


def _backing(loop: str) -> str:
    try:
        return Path(f"/sys/block/{loop}/loop/backing_file").read_text().strip()
    except OSError:
        return ""


def _run_cgroups(pid: int) -> list[str]:
    """Cgroup folders named ``PID-…`` below any ``proctor`` folder of the hierarchy."""
    while True:
        try:  # other runs' cgroups come and go during the walk: walk again
            return [
                str(folder)
                for parent in CGROUP_ROOT.glob("**/proctor")
                for folder in [*parent.glob(f"{pid}-*"), *parent.glob(f"slot-*/{pid}-*")]
            ]
        except FileNotFoundError:
            continue


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServedHost]:
    work = Path(tempfile.mkdtemp(prefix="proctor-stop-", dir="/tmp"))
    work.chmod(0o755)
    env = dict(os.environ, PROCTOR_DATA=str(tmp_path / "data"), PROCTOR_WORK_ROOT=str(work),
               PROCTOR_UPLOAD_BYTES="1000000")  # fmt: skip
    env.pop("PROCTOR_DATABASE_URL", None)
    env.pop("PROCTOR_TOKEN", None)
    svc = ServedHost(env, work)
    svc.add_users()
    yield svc
    svc.stop(kill=True)
    BwrapSandbox(Settings(work_root=work)).reconcile()  # what a dead server left, if anything
    shutil.rmtree(work, ignore_errors=True)


def sleeping_entry(tmp_path: Path) -> Path:
    """The physionet2018 baseline whose setup sleeps (so its job holds its mounts)."""
    entry = tmp_path / "entry"
    shutil.copytree(BASELINE, entry)
    setup = entry / "setup.sh"
    setup.write_text(setup.read_text().replace("set -e\n", "set -e\nsleep 300\n", 1))
    archive = tmp_path / "entry.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(entry, arcname="entry")
    return archive


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stopping_the_server_releases_what_its_running_jobs_held(
    server: ServedHost, tmp_path: Path, stop: signal.Signals
) -> None:
    process = server.serve(workers=2)
    added = server.cli("challenge", "add", "physionet2018", "--json", user="olga")
    assert added.returncode == 0, added.stderr
    archive = sleeping_entry(tmp_path)
    for _ in range(2):
        queued = server.cli("submit", str(archive), "-c", "physionet2018", "--no-wait", "--json",
                            user="bob")  # fmt: skip
        assert queued.returncode == 0, queued.stderr
    pid = process.pid
    assert server.work_root is not None
    work_root = server.work_root

    def both_in_setup() -> bool:
        now = held(work_root, pid)
        return len(now.loops) >= 2 and len(now.cgroups) >= 2

    assert wait_until(both_in_setup, 240), held(work_root, pid)
    before = held(work_root, pid)
    process.send_signal(stop)
    process.wait(timeout=120)
    after = held(work_root, pid, before.loops)
    assert (after.mounts, after.loops, after.cgroups) == ([], {}, []), before
    platform = open_platform(ServiceSettings.from_env(server.env))
    try:
        with platform.db() as session:
            states = [(job.state, job.lease_owner) for job in session.scalars(select(Job))]
    finally:
        platform.close()
    assert states == [(JobState.QUEUED, None)] * 2  # given back, for the next start


@pytest.fixture
def cluster(shared_dir: Path, tmp_path: Path) -> Iterator[Cluster]:
    unreachable = redis_unreachable()
    if unreachable:
        pytest.skip(unreachable)
    deployment = Cluster(shared_dir, f"sqlite:///{tmp_path / 'proctor.db'}")
    try:
        yield deployment
    finally:
        deployment.close()
        BwrapSandbox(Settings(work_root=shared_dir / "work")).reconcile()


@pytest.mark.parametrize(
    ("stop", "group"),
    [(signal.SIGTERM, True), (signal.SIGQUIT, False)],
    ids=["SIGTERM-to-the-group", "SIGQUIT"],
)
def test_a_stopped_celery_worker_releases_what_its_job_held(
    cluster: Cluster, tmp_path: Path, stop: signal.Signals, group: bool
) -> None:
    """SIGTERM to the worker's whole group (as systemd and ``docker stop`` send it) lets the
    job unwind; SIGQUIT to the main process stops it at once (its pool processes killed)."""
    install(cluster.platform, cluster.user("olga", organizer=True), "physionet2018")
    worker = cluster.start_worker()
    entry = tmp_path / "sleeping"
    shutil.copytree(BASELINE, entry)
    setup = entry / "setup.sh"
    setup.write_text(setup.read_text().replace("set -e\n", "set -e\nsleep 300\n", 1))
    sid = cluster.submit(cluster.user("bob", team="blue"), entry, "physionet2018").submission
    work_root = cluster.root / "work"
    job = wait_for(
        lambda: next((j for j in cluster.jobs_of(sid) if j.state == JobState.RUNNING), None),
        240,
        "the job to start",
    )
    pid = lease_pid(job)
    in_setup = wait_until(
        lambda: bool(held(work_root, pid).loops and held(work_root, pid).cgroups), 240
    )
    assert in_setup, held(work_root, pid)
    before = held(work_root, pid)
    if group:
        worker.signal(stop)
    else:
        worker.process.send_signal(stop)
    worker.process.wait(timeout=120)
    after = held(work_root, pid, before.loops)
    assert (after.mounts, after.loops, after.cgroups) == ([], {}, []), before
