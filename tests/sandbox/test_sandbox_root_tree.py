"""Runs on a writable root tree (an image build's step): the tree is ``/``, nothing of the host."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from sandbox_helpers import FAST, SLOT_BASE

from proctor.errors import UsageError
from proctor.sandbox.base import RunSpec
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.process import ProcessSandbox
from proctor.settings import Settings

pytestmark = pytest.mark.sandbox
SCRIPT = (
    'while read -r key value rest; do [ "$key" = Uid: ] && echo uid=$value; done '
    "< /proc/self/status; echo made > /made; echo more > /usr/made; "
    "[ -e /etc/shadow ] && echo SHADOW; [ -e /usr/bin/bwrap ] && echo HOST; echo done"
)


def _tree(folder: Path) -> Path:
    """A root tree holding only dash and the C library it loads."""
    for source in ("/usr/bin/dash", "/lib/x86_64-linux-gnu/libc.so.6",
                   "/lib64/ld-linux-x86-64.so.2"):  # fmt: skip
        real = Path(source).resolve()
        target = (
            folder / "usr" / real.relative_to("/usr")
            if real.is_relative_to("/usr")
            else (folder / real.relative_to("/"))
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(real, target)
    for name in ("bin", "lib", "lib64"):
        if (folder / "usr" / name).is_dir():
            (folder / name).symlink_to(f"usr/{name}")
    (folder / "lib64").mkdir(exist_ok=True)
    loader = folder / "lib64" / "ld-linux-x86-64.so.2"
    if not loader.exists():
        loader.symlink_to("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")
    return folder


def test_a_run_on_a_root_tree_is_uid_0_inside_and_writes_only_the_tree(shared_dir: Path) -> None:
    settings = Settings(work_root=shared_dir / "work", slot_uid_base=SLOT_BASE)
    sandbox = BwrapSandbox(settings)
    with (
        sandbox.session() as session,
        session.workspace(shared_dir / "space", size_bytes=64 * 1024 * 1024) as space,
    ):
        tree = _tree(space / "tree")
        session.give(tree)
        outcome = session.run(RunSpec(["/usr/bin/dash", "-c", SCRIPT], limits=FAST,
                                      root_tree=tree))  # fmt: skip
        assert outcome.succeeded, outcome
        assert outcome.stdout.split() == ["uid=0", "done"]
        assert (tree / "made").read_text() == "made\n"
        assert (tree / "usr" / "made").read_text() == "more\n"
        owner = os.stat(tree / "made").st_uid
        assert owner == os.stat(space).st_uid  # the slot uid outside
        assert not Path("/made").exists()


def test_the_process_backend_refuses_a_root_tree(shared_dir: Path) -> None:
    settings = Settings(work_root=shared_dir, sandbox_backend="process", allow_unsandboxed=True)
    with ProcessSandbox(settings).session() as session, pytest.raises(UsageError, match="bwrap"):
        session.run(RunSpec(["true"], limits=FAST, root_tree=shared_dir))
