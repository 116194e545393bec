"""Hardening item 6: ``/proc/self/mountinfo`` inside a sandbox names nothing of the host's.

An entry prints its mountinfo with a home, a read-only data folder inside a run folder and
(for the environment case) the job's privately mounted image as its root, the way the pipeline
mounts them. No host path of the run folder, no worker pid, no loop device and no slot uid on
the job's own mounts may show. The slot uid still owns bubblewrap's own tmpfs mounts (the
kernel prints that owner in host terms): it is checked to appear nowhere else, and slots are
claimed in random order so it says nothing of other evaluations (``test_sandbox_slots``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from sandbox_helpers import SLOT_BASE, is_root

from proctor.environments.store import BuiltEnvironment
from proctor.sandbox.base import Limits, MiB, Mount, RunSpec
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.rootfs import RootFilesystem
from proctor.sandbox.slots import claim_slot

pytestmark = [pytest.mark.sandbox]
LIMITS = Limits(wall_s=20, memory_bytes=256 * MiB, processes=32)


def _run_folder(shared_dir: Path) -> Path:
    """A run folder laid out as ``store.RunFolder`` does, with a hidden input in it."""
    folder = shared_dir / "work" / "runs" / "entry-q7x9k2.partial"
    data = folder / "inputs" / "task" / "hidden"
    data.mkdir(parents=True)
    (data / "r01.dat").write_text("hidden")
    for path in [shared_dir / "work", *reversed(data.relative_to(shared_dir).parents), data]:
        (shared_dir / path).chmod(0o755)
    return folder


def _mountinfo(sandbox: BwrapSandbox, root: RootFilesystem | None, folder: Path) -> tuple[str, int]:
    data = folder / "inputs" / "task" / "hidden"
    with sandbox.session(root) as session:
        with session.workspace(folder / "homes" / "task", size_bytes=16 * MiB) as home:
            outcome = session.run(
                RunSpec(
                    ["/bin/sh", "-c", "cat /proc/self/mountinfo && cat /data/r01.dat"],
                    mounts=[Mount(home, "/home", writable=True), Mount(data, "/data")],
                    limits=LIMITS,
                    cwd="/home",
                )
            )
        assert outcome.succeeded, outcome.describe()
        return outcome.stdout, session.slot


@pytest.mark.parametrize("kind", ["host", "environment"])
def test_mountinfo_shows_no_host_path_no_worker_pid_and_no_slot(
    kind: str, sandbox_settings: object, shared_dir: Path, request: pytest.FixtureRequest
) -> None:
    if not is_root():
        pytest.skip("without root the sandbox binds host folders as they are (documented)")
    root = None
    if kind == "environment":
        built: BuiltEnvironment = request.getfixturevalue("reference_env")
        root = RootFilesystem(built.rootfs, built.image)
    sandbox = BwrapSandbox(sandbox_settings)  # type: ignore[arg-type]
    folder = _run_folder(shared_dir)
    text, slot = _mountinfo(sandbox, root, folder)
    assert text.endswith("hidden"), text  # the data folder is really there
    lines = text.splitlines()[:-1]
    body = "\n".join(" ".join(line.split()[3:]) for line in lines)  # past ids and dev numbers
    for host_path in (str(shared_dir), str(folder), folder.name, "entry-q7x9k2"):
        assert host_path not in body, host_path
    assert "/dev/loop" not in body
    if kind == "environment":  # the host root case shows the host's /usr, device included
        tails = [line.partition(" - ")[2].split() for line in lines]
        assert all(tail[1].startswith("proctor-") for tail in tails if tail[0] == "erofs")
        assert not re.search(r"/dev/(vd|sd|nvme|mapper)", body), body
    assert not re.search(rf"\b{os.getpid()}\b", body), body
    uid = str(SLOT_BASE + slot)
    for line in lines:  # bubblewrap's own tmpfs mounts (source "tmpfs") and nothing else
        left, _, right = line.partition(" - ")
        if uid in right:
            assert right.split()[:2] == ["tmpfs", "tmpfs"], line
            assert left.split()[4] not in ("/home", "/data"), line
    job_lines = [line for line in lines if line.split()[4] in ("/home", "/data")]
    assert len(job_lines) == 2
    assert all(line.split()[3] == "/" for line in job_lines), job_lines  # own file systems


def test_slots_are_claimed_in_random_order_so_the_uid_says_nothing_of_other_runs(
    tmp_path: Path,
) -> None:
    seen = set()
    for _ in range(16):  # all free each time: first-free claiming would give 0 every time
        with claim_slot(tmp_path) as slot:
            seen.add(slot)
    assert len(seen) > 1, seen  # 64**-15 odds of a false failure
