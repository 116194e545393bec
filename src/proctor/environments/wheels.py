"""Python libraries of an environment: one wheel lock with hashes, installed without resolving.

``lock_requirements`` resolves a ``requirements.in`` for the environment's Python and platform
(not the host's), wheels only, into a pip requirements file pinning every package of the
closure with its sha256; ``install_wheels`` installs exactly that file into the tree with
``--no-deps --require-hashes`` (byte-compiled by the host's CPython of the same minor
version, since the image is read-only at run time). pip uses the host's configured index;
evaluation never has network.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from proctor.errors import EnvironmentBuildError, EnvironmentDeclarationError

DEBIAN_PYTHON = {"bookworm": ("3.11", 36), "trixie": ("3.13", 41)}
"""Debian suite → (its python3 version, its glibc minor version) for wheel platform tags."""
RESOLVE_TIMEOUT_S = 600


@dataclass(frozen=True, slots=True)
class Target:
    """The interpreter and platform wheels are chosen for."""

    python: str
    glibc_minor: int
    machine: str = "x86_64"

    @classmethod
    def for_suite(cls, suite: str) -> Target:
        """The target of Debian ``suite``'s own python3."""
        try:
            python, glibc = DEBIAN_PYTHON[suite]
        except KeyError:
            known = ", ".join(sorted(DEBIAN_PYTHON))
            raise EnvironmentDeclarationError(
                f"no wheel target known for Debian {suite!r}: use one of {known}"
            ) from None
        return cls(python, glibc)

    def pip_options(self) -> list[str]:
        """The pip options choosing wheels for this target (manylinux tags it can load)."""
        tags = [f"manylinux_2_{minor}_{self.machine}" for minor in range(self.glibc_minor, 16, -1)]
        tags += [f"manylinux2014_{self.machine}"]
        abi = "cp" + self.python.replace(".", "")
        options = ["--only-binary=:all:", "--python-version", self.python]
        options += ["--implementation", "cp", "--abi", abi, "--abi", "abi3", "--abi", "none"]
        for tag in tags:
            options += ["--platform", tag]
        return options

    @property
    def site_packages(self) -> str:
        """Where Debian's python3 looks for locally installed packages."""
        return f"/usr/local/lib/python{self.python}/dist-packages"


def _pip(args: list[str], *, what: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    try:
        return subprocess.run(  # noqa: S603 - a fixed pip command line
            command, capture_output=True, text=True, timeout=RESOLVE_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise EnvironmentBuildError(f"{what} took more than {RESOLVE_TIMEOUT_S} s") from None


_NO_WHEEL = re.compile(r"(?:No matching distribution found for|satisfies the requirement) (\S+)")


def _explain(stderr: str, what: str) -> Exception:
    missing = _NO_WHEEL.search(stderr)
    if missing:
        return EnvironmentDeclarationError(
            f"{what}: no binary wheel of {missing.group(1)} for this environment's Python and "
            "platform (the name may be wrong, or the project ships only sources, which are "
            "never built): fix the name, pick a version that ships a wheel, or drop it"
        )
    tail = "\n".join(stderr.strip().splitlines()[-6:])
    return EnvironmentBuildError(f"{what} failed:\n{tail}")


def lock_requirements(requirements: Path, lock: Path, target: Target) -> list[str]:
    """Resolve ``requirements`` for ``target`` into ``lock``; returns the pinned lines."""
    with tempfile.TemporaryDirectory(prefix="proctor-lock-") as scratch:
        report = Path(scratch) / "report.json"
        done = _pip(
            ["install", "--dry-run", "--quiet", "--ignore-installed", "--no-input",
             "--target", str(Path(scratch) / "target"), "--report", str(report),
             *target.pip_options(), "-r", str(requirements)],
            what=f"resolving {requirements}",
        )  # fmt: skip
        if done.returncode != 0:
            raise _explain(done.stderr, f"resolving {requirements}")
        installs = json.loads(report.read_text())["install"]
    pins = []
    for item in sorted(installs, key=lambda i: str(i["metadata"]["name"]).lower()):
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        digest = item["download_info"].get("archive_info", {}).get("hashes", {}).get("sha256")
        if not digest:
            raise EnvironmentBuildError(f"the index gave no sha256 for {name} {version}")
        pins.append(f"{name}=={version} \\\n    --hash=sha256:{digest}")
    header = (
        f"# wheel lock of {requirements.name} for CPython {target.python} on "
        f"manylinux_2_{target.glibc_minor} {target.machine}; written by `proctor env lock`\n"
    )
    lock.write_text(header + "\n".join(pins) + "\n", encoding="utf-8")
    return pins


def install_wheels(lock: Path, root: Path, target: Target) -> None:
    """Install exactly the wheels of ``lock`` into the tree at ``root`` (no resolving)."""
    if not lock.is_file():
        raise EnvironmentDeclarationError(
            f"{lock} does not exist: write it with `proctor env lock CHALLENGE`"
        )
    site = root / target.site_packages.lstrip("/")
    done = _pip(
        ["install", "--quiet", "--no-deps", "--require-hashes", "--no-input",
         "--target", str(site), *target.pip_options(), "-r", str(lock)],
        what=f"installing the wheels of {lock}",
    )  # fmt: skip
    if done.returncode != 0:
        raise _explain(done.stderr, f"installing the wheels of {lock}")


_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
_HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")


def read_wheel_lock(lock: Path) -> dict[str, tuple[str, str]]:
    """Wheel name → (version, sha256) of a lock written by :func:`lock_requirements`."""
    found: dict[str, tuple[str, str]] = {}
    current = ""
    for line in lock.read_text(encoding="utf-8").splitlines():
        pin = _PIN.match(line.strip())
        if pin:
            current = pin.group(1).lower()
            found[current] = (pin.group(2), "")
        digest = _HASH.search(line)
        if digest and current:
            found[current] = (found[current][0], digest.group(1))
    return found
