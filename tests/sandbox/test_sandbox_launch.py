"""The launcher's first link: every rlimit really in force inside, cgroups joined, fail closed."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest
from sandbox_helpers import FAST, SLOT_BASE, is_root, run_as_slot, run_py

from proctor.errors import SandboxUnavailableError
from proctor.sandbox.base import MiB, RunSpec
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.cgroups import CgroupHost
from proctor.sandbox.launch import Rlimits, find_tool, launcher_prefix, limits_mismatch
from proctor.settings import Settings

ODD = dataclasses.replace(
    FAST, cpu_s=2.5, processes=21, file_size_bytes=3 * MiB, open_files=77, memory_bytes=200 * MiB
)


def shown_limits(text: str) -> dict[str, tuple[str, str]]:
    """``/proc/self/limits`` as name → (soft, hard)."""
    rows = {}
    for line in text.splitlines()[1:]:
        soft, hard = line[26:].split()[:2]
        rows[line[:26].strip()] = (soft, hard)
    return rows


def no_cgroup_sandbox(shared_dir: Path) -> BwrapSandbox:
    settings = Settings(
        work_root=shared_dir / "work", slot_uid_base=SLOT_BASE, cgroup_root=shared_dir / "none"
    )
    return BwrapSandbox(settings)


@pytest.mark.sandbox
@pytest.mark.parametrize("cgroups", [True, False], ids=["with cgroups", "without cgroups"])
def test_every_rlimit_is_in_force_inside_the_sandbox(
    sandbox: BwrapSandbox, shared_dir: Path, cgroups: bool
) -> None:
    backend = sandbox if cgroups else no_cgroup_sandbox(shared_dir)
    outcome = run_as_slot(
        backend, RunSpec(["/bin/cat", "/proc/self/limits"], mounts=[], limits=ODD)
    )
    assert outcome.succeeded, outcome
    shown = shown_limits(outcome.stdout)
    assert shown["Max cpu time"] == ("4", "5")  # ceil(2.5) + 1 soft, + 2 hard
    assert shown["Max processes"] == ("22", "22")  # one more for bwrap above the command
    assert shown["Max file size"] == (str(3 * MiB), str(3 * MiB))
    assert shown["Max open files"] == ("77", "77")
    assert shown["Max core file size"] == ("0", "0")
    memory_by_cgroup = cgroups and "memory" in backend.cgroups.parents()
    space = "unlimited" if memory_by_cgroup else str(200 * MiB)
    assert shown["Max address space"] == (space, space)


@pytest.mark.sandbox
def test_limits_outside_dash_units_fall_back_to_prlimit_exactly(sandbox: BwrapSandbox) -> None:
    limits = dataclasses.replace(FAST, file_size_bytes=1000)
    prefix = launcher_prefix(
        limits, [], address_space=False, dash=find_tool("dash"), prlimit=find_tool("prlimit")
    )
    assert prefix[0] == find_tool("prlimit")
    outcome = run_as_slot(
        sandbox, RunSpec(["/bin/cat", "/proc/self/limits"], mounts=[], limits=limits)
    )
    assert outcome.succeeded, outcome
    assert shown_limits(outcome.stdout)["Max file size"] == ("1000", "1000")


def test_whole_dash_units_use_one_dash_and_no_prlimit() -> None:
    dash = find_tool("dash")
    if dash is None:
        pytest.skip("dash is not installed here")
    prefix = launcher_prefix(FAST, [Path("/x/tasks")], address_space=True, dash=dash, prlimit=None)
    assert prefix[0] == dash
    assert "prlimit" not in " ".join(prefix)
    assert prefix[-1] == "/x/tasks"


def test_without_dash_or_prlimit_the_launch_is_refused() -> None:
    with pytest.raises(SandboxUnavailableError, match="apt-get install dash util-linux"):
        launcher_prefix(FAST, [], address_space=False, dash=None, prlimit=None)


@pytest.mark.sandbox
def test_the_sandbox_cannot_raise_its_hard_limits(sandbox: BwrapSandbox) -> None:
    outcome = run_py(
        sandbox,
        """
        import resource
        for which in (resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC, resource.RLIMIT_FSIZE,
                      resource.RLIMIT_CPU, resource.RLIMIT_CORE):
            soft, hard = resource.getrlimit(which)
            try:
                resource.setrlimit(which, (hard, hard + 1))
                print("RAISED", which)
            except (ValueError, OSError):
                print("refused")
        """,
    )
    assert outcome.stdout.split() == ["refused"] * 5, outcome


@pytest.mark.skipif(not is_root(), reason="creating cgroups needs root")
def test_the_launcher_and_its_children_join_every_run_cgroup(shared_dir: Path) -> None:
    host = CgroupHost(Settings(work_root=shared_dir).cgroup_root)
    cgroup = host.create(memory_bytes=64 * MiB, processes=16)
    if cgroup is None:
        pytest.skip("no writable cgroup hierarchy here")
    try:
        prefix = launcher_prefix(
            FAST,
            cgroup.join_files,
            address_space=False,
            dash=find_tool("dash"),
            prlimit=find_tool("prlimit"),
        )
        script = "cat /proc/self/cgroup & wait"
        done = subprocess.run(
            [*prefix, "/bin/sh", "-c", script], check=False, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        name = next(iter(cgroup.folders.values())).name
        joined = [line for line in done.stdout.splitlines() if line.endswith("/" + name)]
        assert len(joined) == len(cgroup.folders), done.stdout
    finally:
        cgroup.remove()


def test_a_cgroup_that_cannot_be_joined_stops_the_launch(shared_dir: Path) -> None:
    marker = shared_dir / "ran"
    prefix = launcher_prefix(
        FAST,
        [shared_dir / "missing" / "tasks"],
        address_space=False,
        dash=find_tool("dash"),
        prlimit=find_tool("prlimit"),
    )
    done = subprocess.run(
        [*prefix, "/usr/bin/touch", str(marker)], check=False, capture_output=True
    )
    assert done.returncode == 125
    assert not marker.exists()


def test_limit_mismatches_are_named() -> None:
    wanted = Rlimits.of(ODD, address_space=False)
    text = Path("/proc/self/limits").read_text()
    wrong = limits_mismatch(text, wanted)
    assert any(line.startswith("Max open files") for line in wrong)
    assert any(line.startswith("Max cpu time") for line in wrong)
