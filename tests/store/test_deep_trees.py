"""Folder trees an entry makes as deep as it likes never crash its job on the host (issue 15, 8).

An entry made a tree 1,100 levels deep in its home; restoring the home for the determinism
rerun hit ``RecursionError`` (``shutil.copytree``/``rmtree`` and ``os.walk`` recurse once per
level), the worker lost the job three times and it was refunded. Every host-side walk, copy
and removal of an entry's files works level by level, whatever the depth, and a job whose
entry made such a tree ends on its first attempt, scored (a deep tree is no fault).
"""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import WORKER_UID_OFFSET, is_root
from service_seed import run_queued, seed, submit
from sqlalchemy import select
from toy_challenge import make_challenge, make_exam_entry

from proctor.pipeline import stages
from proctor.pipeline.report import RunStatus
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.workspace import give_to_uid
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.store.models import Job, SubmissionRow
from proctor.store.runfolder import RunFolder

DEPTHS = [1_100, 10_000]
SLOT_BASE = 64300 + WORKER_UID_OFFSET


@pytest.fixture
def deep_dir() -> Iterator[Path]:
    """A temporary folder removed with ``rm -rf`` (pytest's own clean-up recurses per level).

    On a tmpfs where there is one: removing 10,000 folders from a busy disk takes 20 s here
    (``rm -rf`` as long), and the file system changes nothing of what is tested.
    """
    shm = Path("/dev/shm")
    parent = shm if shm.is_dir() and os.access(shm, os.W_OK) else Path("/tmp")
    folder = Path(tempfile.mkdtemp(prefix="proctor-deep-", dir=parent))
    folder.chmod(0o755)
    yield folder
    subprocess.run(["rm", "-rf", "--one-file-system", str(folder)], check=False)


def deep_tree(root: Path, depth: int) -> None:
    """Make ``root/d/d/…/d/leaf`` ``depth`` folders deep (through descriptors: no path limit)."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", 0o755, dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    leaf = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(leaf, b"bottom")
    os.close(leaf)
    os.symlink("../d", "up", dir_fd=fd)
    os.close(fd)


def depth_of(root: Path) -> tuple[int, bytes]:
    """How many ``d`` folders lie below ``root``, and what the leaf at the bottom says."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    depth = 0
    try:
        while "d" in os.listdir(fd):
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd, depth = child, depth + 1
        leaf = os.open("leaf", os.O_RDONLY, dir_fd=fd)
        text = os.read(leaf, 100)
        os.close(leaf)
        assert os.readlink("up", dir_fd=fd) == "../d"
    finally:
        os.close(fd)
    return depth, text


@pytest.mark.parametrize("depth", DEPTHS)
def test_the_home_is_kept_restored_and_measured_at_any_depth(deep_dir: Path, depth: int) -> None:
    home = deep_dir / "home"
    deep_tree(home / "tree", depth)
    (home / "model.bin").write_bytes(b"w" * 1000)
    assert stages.apparent_bytes(home) == 1000 + len(b"bottom")
    snapshot = deep_dir / "kept" / "home"
    assert stages.snapshot_home(home, snapshot, max_bytes=1 << 20)
    deep_tree(home / "exam-tree", depth)  # what the exam left: gone after the restore
    stages.restore_home(snapshot, home)
    assert sorted(os.listdir(home)) == ["model.bin", "tree"]
    assert depth_of(home / "tree") == (depth, b"bottom")


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_run_folder_with_a_deep_tree_is_removed(deep_dir: Path, depth: int) -> None:
    folder = RunFolder.create(deep_dir, "job-1-a1")
    deep_tree(folder.root / "home-after-setup" / "arousal", depth)
    folder.discard()
    assert not folder.root.exists()


@pytest.mark.skipif(not is_root(), reason="handing files to another uid needs root")
def test_a_deep_tree_is_handed_to_the_slot_uid(deep_dir: Path) -> None:
    deep_tree(deep_dir / "home", 10_000)
    give_to_uid(deep_dir / "home", SLOT_BASE + 99, SLOT_BASE + 99)
    fd = os.open(deep_dir / "home", os.O_RDONLY | os.O_DIRECTORY)
    owners = set()
    try:
        while "d" in os.listdir(fd):
            owners.add(os.stat("d", dir_fd=fd).st_uid)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        owners.add(os.stat("leaf", dir_fd=fd).st_uid)
        assert stat.S_IMODE(os.stat("leaf", dir_fd=fd).st_mode) & 0o600 == 0o600
    finally:
        os.close(fd)
    assert owners == {SLOT_BASE + 99}


MAKE_TREE = """python3 -c '
import os
for _ in range({depth}):
    os.mkdir("{name}")
    os.chdir("{name}")
open("leaf", "w").write("bottom")
'"""


def deep_entry(root: Path, depth: int) -> Path:
    """A good entry whose setup leaves a tree ``depth`` deep in the home, and whose exam
    makes another on one hidden record."""
    entry = make_exam_entry(root, f"  te02) {MAKE_TREE.format(depth=depth, name='e')}\n"
                                  '    exec ./good.sh "$1" ;;')  # fmt: skip
    setup = f"#!/bin/sh\n{MAKE_TREE.format(depth=depth, name='s')} || exit 1\necho set up\n"
    (entry / "setup.sh").write_text(setup)
    return entry


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("depth", DEPTHS)
def test_an_entry_with_a_deep_tree_in_setup_and_exam_is_scored(
    tmp_path: Path, deep_dir: Path, depth: int
) -> None:
    # limits generous enough that a loaded machine still makes (and restores) 10,000 levels;
    # a home whose inodes (one per 4 KiB) hold both trees: at 64 MiB (16,384) the exam's tree
    # ran out of them, failing whichever case ran after it, as the two parallel cases fell
    challenge = make_challenge(
        tmp_path / "challenge",
        case_s=120,
        stage_s=600,
        setup_s=120,
        determinism_cases=3,
        home_bytes=256 * 2**20,
    )
    settings = Settings(work_root=deep_dir / "runs", slot_uid_base=SLOT_BASE)
    report = run_entry(RunRequest(deep_entry(tmp_path / "entry", depth), str(challenge)), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    exam = next(stage for stage in report.to_json()["stages"] if stage["name"] == "exam")
    assert exam["cases"]["failed"] == 0, exam  # te02 makes its tree, no case runs out of room
    rerun = report.to_json()["determinism"]["arousal"]
    assert rerun == {"rerun": 3, "identical": 3}, rerun
    assert [p.name for p in (deep_dir / "runs").iterdir()] == ["roots"]  # images, no run folder


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("depth", DEPTHS)
def test_a_submitted_entry_with_a_deep_tree_ends_on_its_first_attempt(
    tmp_path: Path, deep_dir: Path, depth: int
) -> None:
    seeded = seed(tmp_path / "service", determinism_cases=3)
    sid = submit(seeded, "alice", deep_entry(tmp_path / "entry", depth))
    settings = Settings(work_root=deep_dir / "work", slot_uid_base=SLOT_BASE)
    run_queued(seeded, BwrapSandbox(settings), settings)
    with seeded.platform.db() as session:
        job = session.scalars(select(Job).where(Job.submission_id == sid)).one()
        submission = session.get(SubmissionRow, sid)
        assert submission is not None
        assert (job.state, job.attempt, job.failure, job.flagged) == ("done", 1, None, False)
        assert not submission.refunded and not submission.flagged
