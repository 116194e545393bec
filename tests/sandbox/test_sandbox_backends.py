"""Backend choice, fail-closed probing, the process backend, argv, seccomp, cgroup layouts."""

from __future__ import annotations

import dataclasses
import os
import struct
from pathlib import Path

import pytest
from sandbox_helpers import FAST, SLOT_BASE, run_as_slot, run_py

from proctor.errors import PlatformError, SandboxUnavailableError, UsageError
from proctor.sandbox import create_sandbox
from proctor.sandbox.base import MiB, Mount, RunSpec
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.bwrap_args import bwrap_args, check_target
from proctor.sandbox.cgroups import CgroupHost
from proctor.sandbox.process import ProcessSandbox
from proctor.sandbox.seccomp import X86_64_DENIED, denylist_program
from proctor.settings import Settings


def test_the_factory_builds_the_configured_backend(shared_dir: Path) -> None:
    assert isinstance(create_sandbox(Settings(work_root=shared_dir)), BwrapSandbox)
    process = Settings(work_root=shared_dir, sandbox_backend="process")
    assert isinstance(create_sandbox(process), ProcessSandbox)
    with pytest.raises(UsageError, match="PROCTOR_SANDBOX='docker-ish'"):
        create_sandbox(Settings(work_root=shared_dir, sandbox_backend="docker-ish"))


def test_the_process_backend_refuses_without_explicit_permission(shared_dir: Path) -> None:
    backend = ProcessSandbox(Settings(work_root=shared_dir, sandbox_backend="process"))
    with pytest.raises(SandboxUnavailableError, match="PROCTOR_ALLOW_UNSANDBOXED=1"):
        run_as_slot(backend, RunSpec(["true"], mounts=[], limits=FAST))


def test_the_process_backend_runs_trusted_code_with_limits_and_translated_paths(
    shared_dir: Path,
) -> None:
    settings = Settings(work_root=shared_dir, sandbox_backend="process", allow_unsandboxed=True)
    backend = ProcessSandbox(settings)
    (shared_dir / "in.txt").write_text("hello")
    outcome = run_as_slot(
        backend,
        RunSpec(
            ["sh", "-c", 'cat "$1"; echo " $MODE"; pwd', "sh", "/data/in.txt"],
            mounts=[Mount(shared_dir, "/data")],
            limits=FAST,
            env={"MODE": "trusted"},
            cwd="/data",
        ),
    )
    assert outcome.succeeded, outcome
    assert outcome.stdout.split() == ["hello", "trusted", str(shared_dir)]
    slow = run_as_slot(
        backend, RunSpec(["sleep", "30"], mounts=[], limits=dataclasses.replace(FAST, wall_s=0.5))
    )
    assert slow.timed_out
    assert slow.wall_s < 2


@pytest.mark.sandbox
def test_a_missing_bubblewrap_fails_closed_with_the_fix(sandbox_settings: Settings) -> None:
    backend = BwrapSandbox(sandbox_settings, bwrap="/nonexistent/bwrap")
    with pytest.raises(SandboxUnavailableError, match="apt-get install bubblewrap"):
        run_as_slot(backend, RunSpec(["true"], mounts=[], limits=FAST))


@pytest.mark.sandbox
def test_a_broken_bubblewrap_fails_closed_with_the_fix(
    sandbox_settings: Settings, shared_dir: Path
) -> None:
    fake = shared_dir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    backend = BwrapSandbox(sandbox_settings, bwrap=str(fake))
    with pytest.raises(SandboxUnavailableError, match="unprivileged_userns_clone"):
        backend.check()


@pytest.mark.sandbox
def test_an_unreachable_mount_source_is_named(sandbox: BwrapSandbox, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root runs as a separate slot uid")
    private = tmp_path / "private"  # pytest's folders are 0700 root
    private.mkdir()
    with pytest.raises(PlatformError, match="not reachable by the sandbox uid"):
        run_as_slot(sandbox, RunSpec(["true"], mounts=[Mount(private, "/data")], limits=FAST))


@pytest.mark.parametrize("target", ["relative", "/", "/a/../etc", "/proc/x", "/dev", "/etc"])
def test_bad_mount_targets_are_rejected(target: str) -> None:
    with pytest.raises(UsageError, match="mount target"):
        check_target(target, what="mount target")


def test_an_environment_roots_links_are_never_bound_from_the_host(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for folder in ("usr/bin", "etc", "app", "var", "home"):
        (root / folder).mkdir(parents=True)
    (root / "opt").symlink_to("/root")
    (root / "bin").symlink_to("usr/bin")
    (root / "data").mkdir()
    spec = RunSpec(["true"], mounts=[Mount(tmp_path, "/data/in")], limits=FAST)
    argv = bwrap_args("bwrap", spec, root_dir=root)
    joined = " ".join(argv)
    assert f"--ro-bind {root}/app /app" in joined
    assert "--symlink usr/bin /bin" in joined
    assert "/opt" not in joined and "/root" not in joined.replace(str(root), "")
    assert f"{root}/var" not in joined and f"{root}/home" not in joined
    assert f"{root}/data" not in joined  # a run mounts below it
    (root / "etc").rmdir()
    (root / "etc").symlink_to("/etc")
    with pytest.raises(PlatformError, match="not a root filesystem"):
        bwrap_args("bwrap", spec, root_dir=root)


def test_the_bwrap_command_line_isolates_everything() -> None:
    argv = bwrap_args(
        "bwrap", RunSpec(["true"], mounts=[], limits=FAST, env={"K": "V"}, cwd="/"), seccomp_fd=9
    )
    joined = " ".join(argv)
    for flag in (
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop ALL",
        "--clearenv",
        "--seccomp 9",
        "--hostname sandbox",
        "--remount-ro /",
    ):
        assert flag in joined
    assert "shadow" not in joined
    assert "--share-net" not in joined
    assert f"--size {FAST.tmp_bytes} --perms 1777 --tmpfs /tmp" in joined
    assert f"--size {FAST.shm_bytes} --perms 1777 --tmpfs /dev/shm" in joined
    assert argv[-2:] == ["--", "true"]


def test_the_seccomp_program_is_well_formed() -> None:
    program = denylist_program("x86_64")
    assert program is not None
    assert denylist_program("riscv64") is None
    instructions = [struct.unpack("<HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    assert len(program) % 8 == 0 and len(instructions) < 256
    returns = [k for code, _, _, k in instructions if code == 0x06]
    assert 0x7FFF0000 in returns and 0x00050001 in returns  # allow, EPERM
    compared = {k for code, _, _, k in instructions if code == 0x15}
    assert set(X86_64_DENIED.values()) <= compared


@pytest.mark.sandbox
def test_without_a_cgroup_memory_falls_back_to_the_address_space_limit(
    shared_dir: Path,
) -> None:
    backend = BwrapSandbox(
        Settings(work_root=shared_dir, slot_uid_base=SLOT_BASE, cgroup_root=shared_dir / "none")
    )
    outcome = run_py(
        backend,
        """
        import time
        try:
            block = bytearray(512 * 1024 * 1024)
            print("ALLOCATED")
        except MemoryError:
            print("MemoryError")
        end = time.process_time() + 0.2
        while time.process_time() < end:
            pass
        """,
        limits=dataclasses.replace(FAST, memory_bytes=128 * MiB),
    )
    assert outcome.stdout.strip() == "MemoryError", outcome
    assert outcome.succeeded


@pytest.mark.sandbox
def test_a_cgroup_v2_hierarchy_accounts_cpu_and_kills(shared_dir: Path) -> None:
    root = Path("/sys/fs/cgroup/unified")
    host = CgroupHost(root)
    if host.version != 2 or not host.parents():
        pytest.skip("no writable cgroup v2 hierarchy here")
    backend = BwrapSandbox(
        Settings(work_root=shared_dir, slot_uid_base=SLOT_BASE, cgroup_root=root)
    )
    outcome = run_py(
        backend,
        """
        import os
        if os.fork() == 0:
            while True:
                pass
        while True:
            pass
        """,
        limits=dataclasses.replace(FAST, wall_s=6.0, cpu_s=0.8),
    )
    assert outcome.timed_out, outcome
    assert outcome.cpu_s >= 0.8
    assert outcome.wall_s < 3.0


@pytest.mark.skipif(os.geteuid() != 0, reason="tmpfs workspaces need root")
def test_a_failing_unmount_never_hides_the_error_raised_inside_a_workspace(
    shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from proctor.sandbox import workspace as ws

    real_unmount = ws.unmount
    calls: list[Path] = []

    def failing_unmount(path: Path) -> None:
        calls.append(path)
        real_unmount(path)
        raise PlatformError("simulated unmount failure")

    monkeypatch.setattr(ws, "unmount", failing_unmount)
    with (
        pytest.raises(KeyError, match="the real error"),
        ws.tmpfs_workspace(shared_dir / "ws", size_bytes=1 << 20, uid=0, gid=0),
    ):
        raise KeyError("the real error")
    assert calls == [shared_dir / "ws"]
