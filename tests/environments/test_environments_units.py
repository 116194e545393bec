"""Environment pieces that need no build: lock files, digests, the store, declarations."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from proctor.environments import build as build_module
from proctor.environments.build import build_environment
from proctor.environments.digests import canonical_tar, declaration_digest
from proctor.environments.lockfile import EnvironmentLock, read_lock
from proctor.environments.store import PARTIAL, EnvironmentStore, Manifest, write_manifest
from proctor.environments.wheels import Target, read_wheel_lock
from proctor.errors import (
    ConfigError,
    EnvironmentBuildError,
    EnvironmentDeclarationError,
    InputFileError,
)
from proctor.resolve import load_challenge
from proctor.spec.environment import DebianSpec, EnvironmentSpec, PythonSpec

LOCK = EnvironmentLock(
    "bookworm",
    {"libc6": "2.36-9", "python3": "3.11.2-1+b1"},
    {"numpy": ("2.4.6", "ab" * 32)},
)


def test_a_lock_renders_sorted_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "environment.lock"
    path.write_text(LOCK.render("ref"))
    assert read_lock(path) == LOCK
    assert path.read_text().splitlines()[:3] == [
        "# proctor environment lock: ref",
        "suite bookworm",
        "deb libc6=2.36-9",
    ]


def test_a_malformed_lock_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "environment.lock"
    path.write_text("suite bookworm\ndeb libc6\n")
    with pytest.raises(InputFileError, match=r"environment\.lock, line 2: expected"):
        read_lock(path)


def test_lock_differences_name_each_package() -> None:
    newer = EnvironmentLock("bookworm", {"libc6": "2.36-10", "gcc": "4:12"}, LOCK.wheels)
    assert LOCK.differences(newer) == [
        "deb gcc: locked absent, built 4:12",
        "deb libc6: locked 2.36-9, built 2.36-10",
        "deb python3: locked 3.11.2-1+b1, built absent",
    ]


def test_the_wheel_target_asks_for_the_environments_python_not_the_hosts() -> None:
    options = Target.for_suite("bookworm").pip_options()
    assert options[options.index("--python-version") + 1] == "3.11"
    assert "manylinux_2_36_x86_64" in options and "manylinux2014_x86_64" in options
    with pytest.raises(EnvironmentDeclarationError, match="no wheel target known for Debian"):
        Target.for_suite("sid")


def test_a_wheel_lock_is_read_with_its_hashes(tmp_path: Path) -> None:
    lock = tmp_path / "requirements.lock"
    lock.write_text(f"# header\nNumPy==2.4.6 \\\n    --hash=sha256:{'cd' * 32}\n")
    assert read_wheel_lock(lock) == {"numpy": ("2.4.6", "cd" * 32)}


def spec_in(tmp_path: Path, **changes: object) -> EnvironmentSpec:
    (tmp_path / "requirements.in").write_text("numpy\n")
    (tmp_path / "requirements.lock").write_text(f"numpy==2.4.6 --hash=sha256:{'ab' * 32}\n")
    base = EnvironmentSpec(
        name="t",
        debian=DebianSpec(packages=("python3",)),
        python=PythonSpec(
            requirements=tmp_path / "requirements.in", lock=tmp_path / "requirements.lock"
        ),
    )
    return base.model_copy(update=changes)


def test_the_declaration_digest_follows_what_determines_the_tree(tmp_path: Path) -> None:
    spec = spec_in(tmp_path)
    first = declaration_digest(spec)
    assert declaration_digest(spec) == first
    assert declaration_digest(spec.model_copy(update={"name": "renamed"})) == first
    (tmp_path / "requirements.lock").write_text(f"numpy==2.4.5 --hash=sha256:{'ef' * 32}\n")
    assert declaration_digest(spec) != first
    gcc = spec.model_copy(update={"debian": DebianSpec(packages=("python3", "gcc"))})
    assert declaration_digest(gcc) != declaration_digest(spec)


def test_the_canonical_tar_digest_ignores_times_and_owners_but_not_contents(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "tree"
    (tree / "usr" / "bin").mkdir(parents=True)
    (tree / "usr" / "bin" / "tool").write_text("#!/bin/sh\n")
    (tree / "bin").symlink_to("usr/bin")
    first, size = canonical_tar(tree)
    os.utime(tree / "usr" / "bin" / "tool", (1, 1))
    assert canonical_tar(tree)[0] == first
    (tree / "usr" / "bin" / "tool").write_text("#!/bin/sh\nexit 1\n")
    assert canonical_tar(tree)[0] != first
    assert size > 0


def test_a_dead_builders_leftover_is_never_found_and_is_removed(tmp_path: Path) -> None:
    store = EnvironmentStore(tmp_path / "store")
    store.root.mkdir()
    leftover = store.root / f"{'a' * 64}{PARTIAL}999999999"
    (leftover / "rootfs").mkdir(parents=True)
    write_manifest(leftover, Manifest("x", "d", "a" * 64, "bookworm", {}, {}))
    assert store.find("a" * 64) is None
    assert store.all() == []
    store.partial("b" * 64)
    assert not leftover.exists()


WAIT_TURN = """
import sys
from pathlib import Path
from proctor.environments.store import EnvironmentStore
with EnvironmentStore(Path(sys.argv[1])).building("c" * 64):
    Path(sys.argv[2]).write_text("built")
"""


def test_a_second_builder_of_one_declaration_waits_for_the_first(tmp_path: Path) -> None:
    store = EnvironmentStore(tmp_path / "store")
    done = tmp_path / "second-built"
    with store.building("c" * 64):
        second = subprocess.Popen([sys.executable, "-c", WAIT_TURN, str(store.root), str(done)])
        with pytest.raises(subprocess.TimeoutExpired):
            second.wait(timeout=1.5)
        assert not done.exists()
    assert second.wait(timeout=30) == 0
    assert done.read_text() == "built"
    assert list(store.root.iterdir()) == []  # the turn leaves nothing behind


@pytest.mark.skipif(os.geteuid() != 0, reason="bind mounts need root")
def test_a_killed_builders_mounts_are_unmounted_never_emptied_through(tmp_path: Path) -> None:
    """A bootstrap killed mid-way leaves the host's /dev/shm bound into its root: removing the
    leftover must unmount it first, never delete the host's files through the mount."""
    host_shm = tmp_path / "host-shm"
    host_shm.mkdir()
    (host_shm / "PostgreSQL.segment").write_text("kept")
    store = EnvironmentStore(tmp_path / "store")
    leftover = store.root / f"{'a' * 64}{PARTIAL}999999999"
    shm = leftover / "rootfs" / "dev" / "shm"
    shm.mkdir(parents=True)
    subprocess.run(["mount", "--bind", str(host_shm), str(shm)], check=True)
    try:
        store.partial("b" * 64)
    finally:
        subprocess.run(["umount", "--lazy", str(shm)], capture_output=True, check=False)
    assert (host_shm / "PostgreSQL.segment").read_text() == "kept"
    assert not leftover.exists()


def test_an_interrupted_build_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(spec: object, root: Path, **_: object) -> None:
        (root / "usr").mkdir(parents=True)
        raise KeyboardInterrupt

    monkeypatch.setattr(build_module, "bootstrap", interrupted)
    store = EnvironmentStore(tmp_path / "store")
    with pytest.raises(KeyboardInterrupt):
        build_environment(spec_in(tmp_path), store, is_root=True)
    assert list(store.root.iterdir()) == []


def test_a_full_disk_is_a_clear_message_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(spec: object, root: Path, **_: object) -> None:
        root.mkdir()
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(build_module, "bootstrap", full)
    store = EnvironmentStore(tmp_path / "store")
    with pytest.raises(
        EnvironmentBuildError, match=r"no space left on device in .*PROCTOR_ENV_ROOT"
    ):
        build_environment(spec_in(tmp_path), store, is_root=True)
    assert list(store.root.iterdir()) == []


def challenge_with(tmp_path: Path, environment: object) -> Path:
    for folder in ("public",):
        (tmp_path / folder).mkdir(exist_ok=True)
    data = {
        "name": "envtoy",
        "title": "t",
        "protocol": {"kind": "records"},
        "tasks": [{"name": "main", "public_inputs": "public", "scorer": "physionet2018"}],
        "phases": [{"name": "final", "tasks": ["main"]}],
        "environment": environment,
    }
    (tmp_path / "challenge.yaml").write_text(yaml.safe_dump(data))
    return tmp_path


def test_debian_python_libraries_beside_a_wheel_lock_are_refused(tmp_path: Path) -> None:
    (tmp_path / "r.in").write_text("numpy\n")
    env = {
        "debian": {"packages": ["python3", "python3-numpy"]},
        "python": {"requirements": "r.in", "lock": "r.lock"},
    }
    with pytest.raises(
        ConfigError, match=r"environment\.debian\.packages\[1\]: Debian's python3-numpy"
    ):
        load_challenge(challenge_with(tmp_path, env))


def test_a_missing_requirements_file_is_named(tmp_path: Path) -> None:
    env = {"python": {"requirements": "nope.in", "lock": "r.lock"}}
    with pytest.raises(
        ConfigError, match=r"environment\.python\.requirements: .*nope\.in does not"
    ):
        load_challenge(challenge_with(tmp_path, env))


def test_host_is_the_default_and_a_task_may_override(tmp_path: Path) -> None:
    challenge = load_challenge(challenge_with(tmp_path, "host"))
    assert challenge.environment_of("main") is None
    (tmp_path / "r.in").write_text("numpy\n")
    env = {"name": "mine", "python": {"requirements": "r.in", "lock": "r.lock"}}
    challenge = load_challenge(challenge_with(tmp_path, env))
    found = challenge.environment_of("main")
    assert found is not None and found.name == "mine"
    assert found.python is not None and found.python.requirements == (tmp_path / "r.in").resolve()


def test_a_file_target_inside_the_sandboxes_own_folders_is_refused(tmp_path: Path) -> None:
    (tmp_path / "tool").write_text("x")
    env = {"files": [{"source": "tool", "target": "/tmp/tool"}]}
    with pytest.raises(ConfigError, match=r"environment\.files\[0\]\.target"):
        load_challenge(challenge_with(tmp_path, env))


def test_a_stored_declaration_is_a_cache_hit(tmp_path: Path) -> None:
    store = EnvironmentStore(tmp_path / "store")
    spec = spec_in(tmp_path)
    key = declaration_digest(spec)
    folder = store.root / key
    (folder / "rootfs" / "usr").mkdir(parents=True)
    write_manifest(folder, Manifest("t", "d" * 64, key, "bookworm", {}, {}))
    built, fresh = build_environment(spec, store, is_root=True)
    assert not fresh and built.folder == folder


@pytest.mark.slow
def test_a_requirement_without_a_wheel_is_named(tmp_path: Path) -> None:
    from proctor.environments.wheels import lock_requirements

    (tmp_path / "requirements.in").write_text("no-such-project-proctor-xyz\n")
    with pytest.raises(EnvironmentDeclarationError, match="no binary wheel of no-such-project"):
        lock_requirements(
            tmp_path / "requirements.in", tmp_path / "r.lock", Target.for_suite("bookworm")
        )
    assert not (tmp_path / "r.lock").exists()


@pytest.mark.very_slow  # a minute or more of a slow machine's CI: `make test-slow`
@pytest.mark.slow
@pytest.mark.environment
def test_a_debian_package_that_does_not_exist_is_named_and_nothing_is_kept(
    tmp_path: Path,
) -> None:
    spec = EnvironmentSpec(name="t", debian=DebianSpec(packages=("python3", "no-such-pkg-xyz")))
    store = EnvironmentStore(tmp_path / "store")
    with pytest.raises(EnvironmentDeclarationError, match="has no package 'no-such-pkg-xyz'"):
        build_environment(spec, store, is_root=os.geteuid() == 0)
    assert list(store.root.iterdir()) == []


def test_prune_keeps_the_declared_and_removes_the_rest_and_leftovers(tmp_path: Path) -> None:
    from dataclasses import replace

    from proctor.services.local.environments import list_environments, prune_environments
    from proctor.settings import Settings

    store = EnvironmentStore(tmp_path / "store")
    for key in ("a" * 64, "b" * 64):
        folder = store.root / key
        (folder / "rootfs").mkdir(parents=True)
        write_manifest(folder, Manifest(key[:1], "d" * 64, key, "bookworm", {}, {}))
    leftover = store.root / f"{'c' * 64}{PARTIAL}999999999"
    leftover.mkdir()
    settings = replace(Settings.from_env(), env_root=store.root)
    removed = prune_environments(settings, keep={"a" * 64})
    assert set(removed) == {leftover, store.root / ("b" * 64)}
    assert [b.manifest.declaration_digest for b in list_environments(settings)] == ["a" * 64]


def test_an_image_layer_with_a_hard_link_or_a_path_twice_is_refused(tmp_path: Path) -> None:
    """Review: a hard link in an imported layer could write through to a host file."""
    import tarfile

    from proctor.environments.oci import _TreeFilter

    link = tarfile.TarInfo("usr/a")
    link.type, link.linkname = tarfile.LNKTYPE, "../outside/host.txt"
    with pytest.raises(InputFileError, match="not a file, folder or symbolic link"):
        _TreeFilter()(link, str(tmp_path))
    guard = _TreeFilter()
    first = tarfile.TarInfo("usr/b")
    guard(first, str(tmp_path))
    with pytest.raises(InputFileError, match="comes twice"):
        guard(tarfile.TarInfo("usr/./b"), str(tmp_path))
