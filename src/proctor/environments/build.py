"""Build a declared environment into the store: tree, lock, erofs image, manifest.

A second build of the same declaration is a cache hit (the store is keyed by the declaration's
digest). A build works in a partial folder that is renamed into place only when complete; a
failed or interrupted build removes it, so nothing half-built is ever used.
"""

from __future__ import annotations

import dataclasses
import errno
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from proctor.environments.bytecode import settle_bytecode
from proctor.environments.debian import bootstrap, installed_packages
from proctor.environments.digests import canonical_tar, declaration_digest
from proctor.environments.lockfile import EnvironmentLock, read_lock
from proctor.environments.mounts import remove_tree
from proctor.environments.store import (
    IMAGE,
    LOCK,
    ROOTFS,
    BuiltEnvironment,
    EnvironmentStore,
    Manifest,
    write_manifest,
)
from proctor.environments.wheels import Target, install_wheels, read_wheel_lock
from proctor.errors import EnvironmentBuildError, EnvironmentDeclarationError
from proctor.spec.environment import EnvironmentSpec

Step = Callable[[str], None]
"""Told the name of each build step as it starts (for a progress display)."""
PACK_TIMEOUT_S = 600
LOCK_INSIDE = "/usr/share/proctor/environment.lock"
"""Where the image itself carries its lock (so an exported image documents its contents)."""
ETC_PLACEHOLDERS = ("hosts", "passwd", "group")
"""Files the sandbox replaces with its own; they must exist in the image to be bound over."""
ETC_REMOVED = ("shadow", "shadow-", "gshadow", "gshadow-")
"""Password hashes have no use in a sandbox: the image carries none."""


def _no_step(_: str) -> None:
    """Ignore."""


def build_environment(
    spec: EnvironmentSpec,
    store: EnvironmentStore,
    *,
    is_root: bool,
    step: Step = _no_step,
) -> tuple[BuiltEnvironment, bool]:
    """The built environment of ``spec`` and whether it was built now (False: cache hit)."""
    key = declaration_digest(spec)
    found = store.find(key)
    if found is not None:
        return found, False
    with store.building(key):
        found = store.find(key)  # built by another process while this one waited
        if found is not None:
            return found, False
        return _build_once(spec, store, key, is_root=is_root, step=step)


def _build_once(
    spec: EnvironmentSpec, store: EnvironmentStore, key: str, *, is_root: bool, step: Step
) -> tuple[BuiltEnvironment, bool]:
    partial = store.partial(key)
    try:
        manifest = _build_into(spec, partial, key, is_root=is_root, step=step)
        # a first build writes the published lock, which is part of the declaration
        key = declaration_digest(spec)
        manifest = dataclasses.replace(manifest, declaration_digest=key)
        write_manifest(partial, manifest)
        step("commit")
        return store.commit(partial, key), True
    except OSError as err:
        remove_tree(partial)
        if err.errno == errno.ENOSPC:
            raise EnvironmentBuildError(
                f"no space left on device in {store.root} while building {spec.name}: free "
                "space there or set PROCTOR_ENV_ROOT to a larger disk"
            ) from err
        raise EnvironmentBuildError(f"building {spec.name} failed: {err}") from err
    except BaseException:
        remove_tree(partial)
        raise


def _build_into(
    spec: EnvironmentSpec, partial: Path, key: str, *, is_root: bool, step: Step
) -> Manifest:
    rootfs = partial / ROOTFS
    published = read_lock(spec.lock) if spec.lock is not None and spec.lock.is_file() else None
    step("debian")
    bootstrap(spec.debian, rootfs, pins=published.debian if published else None, is_root=is_root)
    target = Target.for_suite(spec.debian.suite)
    wheels: dict[str, tuple[str, str]] = {}
    if spec.python is not None:
        step("wheels")
        install_wheels(spec.python.lock, rootfs, target)
        wheels = read_wheel_lock(spec.python.lock)
    step("files")
    _add_files(spec, rootfs)
    built = EnvironmentLock(spec.debian.suite, installed_packages(rootfs), wheels)
    _check_against(published, built, spec)
    (partial / LOCK).write_text(built.render(spec.name), encoding="utf-8")
    inside = rootfs / LOCK_INSIDE.lstrip("/")
    inside.parent.mkdir(parents=True, exist_ok=True)
    inside.write_text(built.render(spec.name), encoding="utf-8")
    if published is None and spec.lock is not None:
        spec.lock.parent.mkdir(parents=True, exist_ok=True)
        spec.lock.write_text(built.render(spec.name), encoding="utf-8")
    step("pack")
    settle_bytecode(rootfs)  # before the image's times are set: bytecode stays valid inside
    pack_image(rootfs, partial / IMAGE)
    step("digest")
    digest, size = canonical_tar(rootfs)
    return Manifest(
        name=spec.name,
        digest=digest,
        declaration_digest=key,
        suite=spec.debian.suite,
        packages=built.debian,
        wheels=built.wheels,
        variables=dict(spec.variables),
        tree_bytes=size,
        image_bytes=(partial / IMAGE).stat().st_size,
    )


def _add_files(spec: EnvironmentSpec, rootfs: Path) -> None:
    for item in spec.files:
        target = rootfs / item.target.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if item.source.is_dir():
            shutil.copytree(item.source, target, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(item.source, target)
    for name in ETC_PLACEHOLDERS:
        placeholder = rootfs / "etc" / name
        if not placeholder.exists():
            placeholder.write_text("")
    for name in ETC_REMOVED:
        (rootfs / "etc" / name).unlink(missing_ok=True)


def _check_against(
    published: EnvironmentLock | None, built: EnvironmentLock, spec: EnvironmentSpec
) -> None:
    if published is None:
        return
    differences = published.differences(built)
    if differences:
        shown = "\n".join(f"  - {line}" for line in differences[:20])
        more = f"\n  (and {len(differences) - 20} more)" if len(differences) > 20 else ""
        raise EnvironmentDeclarationError(
            f"the build of {spec.name} does not reproduce {spec.lock}:\n{shown}{more}\n"
            "the archive changed since the lock was published: import the published image, "
            "or delete the lock to build and publish a new one"
        )


def pack_image(rootfs: Path, image: Path) -> None:
    """Pack the tree as an lz4-compressed erofs image (seconds for a 1 GB tree)."""
    tool = shutil.which("mkfs.erofs")
    if tool is None:
        raise EnvironmentBuildError("mkfs.erofs is not installed: apt-get install erofs-utils")
    command = [tool, "-zlz4", "-T0", "--all-root", str(image), str(rootfs)]
    try:
        done = subprocess.run(  # noqa: S603 - an argv list, no shell
            command, capture_output=True, text=True, timeout=PACK_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise EnvironmentBuildError(f"mkfs.erofs took more than {PACK_TIMEOUT_S} s") from None
    if done.returncode != 0:
        if "No space left" in done.stderr:
            raise OSError(errno.ENOSPC, "No space left on device", str(image))
        raise EnvironmentBuildError(f"mkfs.erofs failed: {done.stderr.strip()[-600:]}")
