"""The Debian part of an environment: a minbase tree with the declared packages (mmdebstrap).

Run as root, mmdebstrap builds in ``root`` mode; otherwise in ``unshare`` mode (user
namespaces, no root needed). With a lock, every package is asked for at its locked version, so
a build either reproduces the lock or fails naming what the archive no longer has.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from proctor.errors import EnvironmentBuildError, EnvironmentDeclarationError
from proctor.spec.environment import DebianSpec

BOOTSTRAP_TIMEOUT_S = 1200
SOURCE_DATE_EPOCH = 1_700_000_000
"""A fixed build time, so two builds of one lock give the same files (mmdebstrap honours it)."""
_MISSING = re.compile(
    r"Unable to locate package (\S+)|Package '?([^' ]+)'? has no installation candidate"
)
_MISSING_VERSION = re.compile(r"Version '([^']+)' for '([^']+)' was not found")


def mmdebstrap() -> str:
    """The mmdebstrap executable, or a message saying how to install it."""
    found = shutil.which("mmdebstrap")
    if found is None:
        raise EnvironmentBuildError(
            "mmdebstrap is not installed: apt-get install mmdebstrap (Debian package), or "
            "import a published image with `proctor env import FILE`"
        )
    return found


def bootstrap(spec: DebianSpec, root: Path, *, pins: dict[str, str] | None, is_root: bool) -> None:
    """Build the minbase tree of ``spec`` at ``root`` (which must not exist)."""
    packages = list(spec.packages)
    if pins:
        packages = [f"{name}={version}" for name, version in sorted(pins.items())]
    command = [mmdebstrap(), "--variant=minbase", f"--mode={'root' if is_root else 'unshare'}"]
    if packages:
        command.append("--include=" + ",".join(packages))
    preferences = root.parent / "lock.pref"
    if pins:
        command += _pinning_hooks(pins, preferences)
    command += [spec.suite, str(root)]
    if spec.mirror:
        command.append(spec.mirror)
    try:
        done = subprocess.run(  # noqa: S603 - an argv list, no shell
            command,
            capture_output=True,
            text=True,
            timeout=BOOTSTRAP_TIMEOUT_S,
            check=False,
            env={**os.environ, "SOURCE_DATE_EPOCH": str(SOURCE_DATE_EPOCH)},
        )
    except subprocess.TimeoutExpired:
        raise EnvironmentBuildError(
            f"mmdebstrap took more than {BOOTSTRAP_TIMEOUT_S} s; is the Debian archive reachable?"
        ) from None
    finally:
        preferences.unlink(missing_ok=True)
    if done.returncode != 0:
        raise _explain(done.stderr, spec, locked=bool(pins))


PINS_FILE = "etc/apt/preferences.d/proctor-lock.pref"
"""Where the pins live in the tree while it is built (removed before it is packed)."""


def _pinning_hooks(pins: dict[str, str], preferences: Path) -> list[str]:
    """The mmdebstrap options pinning every package at its locked version from the first step on.

    Without them the essential set is unpacked at the archive's newest versions (a security
    update newer than the lock, say), and the locked install cannot take them back.
    """
    preferences.write_text(
        "".join(
            f"Package: {name}\nPin: version {version}\nPin-Priority: 1001\n\n"
            for name, version in sorted(pins.items())
        ),
        encoding="utf-8",
    )
    target = f'"$1/{PINS_FILE}"'
    return [
        f'--setup-hook=mkdir -p "$1/etc/apt/preferences.d" && cp {shlex.quote(str(preferences))} '
        f"{target}",
        f"--customize-hook=rm -f {target}",
    ]


def _explain(stderr: str, spec: DebianSpec, *, locked: bool) -> Exception:
    version = _MISSING_VERSION.search(stderr)
    if version:
        return EnvironmentDeclarationError(
            f"the Debian archive no longer has {version.group(2)} {version.group(1)}, which "
            "environment.lock pins: the published lock cannot be rebuilt from this archive; "
            "delete the lock to build (and publish) a new one, or import the published image"
        )
    missing = _MISSING.search(stderr)
    if missing:
        name = missing.group(1) or missing.group(2)
        return EnvironmentDeclarationError(
            f"Debian {spec.suite} has no package {name!r}: fix environment.debian.packages"
        )
    if "No space left on device" in stderr:
        return EnvironmentBuildError("no space left on device while building the environment")
    tail = "\n".join(stderr.strip().splitlines()[-8:])
    what = "the locked build" if locked else "mmdebstrap"
    return EnvironmentBuildError(f"{what} failed:\n{tail}")


def installed_packages(root: Path) -> dict[str, str]:
    """Package → version of every Debian package installed in the tree at ``root``."""
    query = shutil.which("dpkg-query") or "/usr/bin/dpkg-query"
    fields = "-f=${db:Status-Abbrev}\t${Package}\t${Version}\n"
    admin = f"--admindir={root / 'var/lib/dpkg'}"
    done = subprocess.run(  # noqa: S603 - an argv list, no shell
        [query, admin, "-W", fields], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise EnvironmentBuildError(f"dpkg-query failed on {root}: {done.stderr.strip()}")
    packages = {}
    for line in done.stdout.splitlines():
        status, package, version = line.split("\t")
        if status.startswith("ii"):
            packages[package.split(":")[0]] = version
    return packages
