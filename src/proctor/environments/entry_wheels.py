"""Participant wheels: an entry's ``requirements.txt`` resolved by the host into a layer.

Only where the challenge allows it (``environment.participant_wheels.allow``). The request is
hostile input: only plain requirement specifiers (no options, URLs or paths), at most
``max_requirements`` of them, resolved from the host's configured index only, wheels only, for
the environment's Python and platform, constrained to the environment's own pinned versions,
under a time and memory cap; the downloaded wheels are capped in bytes. What is installed is
recorded with its hashes. The layer is shown read-only to every run; evaluation never has
network.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from proctor.environments.wheels import Target
from proctor.errors import EntryRequirementsError, PlatformError
from proctor.spec.environment import ParticipantWheels

REQUIREMENTS = "requirements.txt"
MAX_FILE_BYTES = 64 * 1024
LAYER_TARGET = "/wheels"
_NO_WHEEL = re.compile(r"(?:No matching distribution found for|satisfies the requirement) (\S+)")
_CONFLICT = re.compile(r"ResolutionImpossible|conflicting dependencies|Cannot install")


@dataclass(frozen=True, slots=True)
class EntryWheel:
    """One wheel installed for an entry: name, version and the sha256 pip checked."""

    name: str
    version: str
    sha256: str


def read_requirements(path: Path, limits: ParticipantWheels) -> list[Requirement]:
    """The requirements of an entry's ``requirements.txt``, or an error naming the line."""
    data = path.read_bytes()
    if len(data) > MAX_FILE_BYTES:
        raise EntryRequirementsError(
            f"{REQUIREMENTS} is {len(data)} bytes, over {MAX_FILE_BYTES}: list only what you import"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise EntryRequirementsError(f"{REQUIREMENTS} is not UTF-8 text") from None
    found: list[Requirement] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-"):
            raise EntryRequirementsError(
                f"{REQUIREMENTS}, line {number}: options such as -r, -e or --index-url are not "
                "allowed; list package names (with versions) only"
            )
        try:
            requirement = Requirement(line)
        except InvalidRequirement as err:
            raise EntryRequirementsError(
                f"{REQUIREMENTS}, line {number}: {line[:60]!r} is not a requirement ({err})"
            ) from None
        if requirement.url:
            raise EntryRequirementsError(
                f"{REQUIREMENTS}, line {number}: direct URLs are not allowed; name the package"
            )
        found.append(requirement)
    if len(found) > limits.max_requirements:
        raise EntryRequirementsError(
            f"{REQUIREMENTS} lists {len(found)} requirements; this challenge allows at most "
            f"{limits.max_requirements}"
        )
    return found


def _pip(args: list[str], limits: ParticipantWheels) -> subprocess.CompletedProcess[str]:
    prlimit = shutil.which("prlimit")
    # memory while resolving; and no single file (a downloaded wheel) past the byte cap, so a
    # request for huge wheels is stopped while it downloads, not after the disk is full
    caps = [f"--as={limits.resolve_memory_bytes}", f"--fsize={limits.max_bytes}"]
    cap = [prlimit, *caps, "--"] if prlimit else []
    command = [*cap, sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    try:
        done = subprocess.run(  # noqa: S603 - a fixed pip command line; no entry-given options
            [*command, *args],
            capture_output=True,
            text=True,
            timeout=limits.resolve_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise EntryRequirementsError(
            f"resolving {REQUIREMENTS} took more than {limits.resolve_s:g} s: ask for fewer or "
            "pinned packages"
        ) from None
    if done.returncode == -signal.SIGXFSZ:
        raise EntryRequirementsError(
            f"a wheel {REQUIREMENTS} asks for is over the {limits.max_bytes}-byte cap of this "
            "challenge"
        )
    return done


def _refusal(stderr: str) -> Exception:
    missing = _NO_WHEEL.search(stderr)
    if missing:
        return EntryRequirementsError(
            f"{REQUIREMENTS}: no wheel of {missing.group(1)} for this environment's Python and "
            "platform (the name may be wrong, or it ships only sources, which are never built)"
        )
    if _CONFLICT.search(stderr):
        tail = "\n".join(stderr.strip().splitlines()[-6:])
        return EntryRequirementsError(
            f"{REQUIREMENTS} conflicts with the environment's own pinned packages:\n{tail}"
        )
    if "MemoryError" in stderr or "Cannot allocate memory" in stderr:
        return EntryRequirementsError(f"resolving {REQUIREMENTS} needed too much memory")
    if "File too large" in stderr or "SIGXFSZ" in stderr:
        return EntryRequirementsError(
            f"a wheel {REQUIREMENTS} asks for is over this challenge's byte cap for participant "
            "wheels"
        )
    tail = "\n".join(stderr.strip().splitlines()[-6:])
    return PlatformError(f"resolving {REQUIREMENTS} failed on the host:\n{tail}")


def install_entry_wheels(
    requirements: list[Requirement],
    layer: Path,
    *,
    target: Target,
    pinned: dict[str, tuple[str, str]],
    limits: ParticipantWheels,
) -> list[EntryWheel]:
    """Resolve and install ``requirements`` into ``layer``; returns what was installed.

    ``pinned``: the environment's own wheels (name → version, sha256), which constrain the
    resolution and are not installed again.
    """
    work = layer.parent / f"{layer.name}.work"
    downloads = work / "downloads"
    wheels = download_entry_wheels(
        requirements, downloads, work=work, target=target, pinned=pinned, limits=limits
    )
    if not wheels:
        return []
    lock = work / "entry-wheels.lock"
    done = _pip(["install", "--quiet", "--no-deps", "--require-hashes", "--no-index",
                 "--find-links", str(downloads), "--target", str(layer), *target.pip_options(),
                 "-r", str(lock)], limits)  # fmt: skip
    if done.returncode != 0:
        raise _refusal(done.stderr)
    shutil.rmtree(downloads, ignore_errors=True)
    return wheels


def download_entry_wheels(
    requirements: list[Requirement],
    downloads: Path,
    *,
    work: Path,
    target: Target,
    pinned: dict[str, tuple[str, str]],
    limits: ParticipantWheels,
) -> list[EntryWheel]:
    """Resolve ``requirements`` and fetch their wheels into ``downloads``; install nothing.

    The same checks as :func:`install_entry_wheels` (hashes, the byte cap); ``downloads`` is
    then a wheelhouse an image build's ``pip install`` reads with no network. ``work`` holds
    the resolution's files and the lock (``entry-wheels.lock``).
    """
    work.mkdir(parents=True, exist_ok=True)
    wheels = _resolve(requirements, work, target=target, pinned=pinned, limits=limits)
    downloads.mkdir(parents=True, exist_ok=True)
    if not wheels:
        return []
    lock = work / "entry-wheels.lock"
    lock.write_text("".join(f"{w.name}=={w.version} --hash=sha256:{w.sha256}\n" for w in wheels))
    _download(lock, downloads, target=target, limits=limits)
    return wheels


def _pinned_already(requirement: Requirement, pinned: dict[str, tuple[str, str]]) -> bool:
    """True when the environment's own pin satisfies ``requirement`` (no extras, no marker)."""
    pin = pinned.get(canonicalize_name(requirement.name))
    if pin is None or requirement.extras or requirement.marker is not None:
        return False
    return requirement.specifier.contains(pin[0], prereleases=True)


def _resolve(
    requirements: list[Requirement],
    work: Path,
    *,
    target: Target,
    pinned: dict[str, tuple[str, str]],
    limits: ParticipantWheels,
) -> list[EntryWheel]:
    """The wheels the requirements add to the environment (its own pins as constraints)."""
    pinned = {canonicalize_name(name): pin for name, pin in pinned.items()}
    if all(_pinned_already(requirement, pinned) for requirement in requirements):
        return []  # the environment holds every one: nothing to resolve, no index asked
    asked = work / "requirements.txt"
    asked.write_text("".join(f"{r}\n" for r in requirements), encoding="utf-8")
    constraints = work / "constraints.txt"
    constraints.write_text("".join(f"{n}=={v}\n" for n, (v, _) in sorted(pinned.items())))
    report = work / "report.json"
    done = _pip(
        ["install", "--dry-run", "--quiet", "--ignore-installed", "--target", str(work / "t"),
         "--report", str(report), *target.pip_options(), "-c", str(constraints),
         "-r", str(asked)],
        limits,
    )  # fmt: skip
    if done.returncode != 0:
        raise _refusal(done.stderr)
    wheels = []
    for item in json.loads(report.read_text())["install"]:
        name = canonicalize_name(str(item["metadata"]["name"]))
        if name in pinned:
            continue  # already in the environment, at the pinned version
        digest = item["download_info"].get("archive_info", {}).get("hashes", {}).get("sha256", "")
        if not digest:
            raise EntryRequirementsError(
                f"{REQUIREMENTS}: the index gives no sha256 for {name}, so it cannot be "
                "installed with a checked hash: pick another version"
            )
        wheels.append(EntryWheel(name, str(item["metadata"]["version"]), digest))
    return wheels


def _download(lock: Path, downloads: Path, *, target: Target, limits: ParticipantWheels) -> Path:
    """Fetch the locked wheels (hashes checked) and refuse them past the byte cap."""
    done = _pip(["download", "--quiet", "--no-deps", "--require-hashes", "-d", str(downloads),
                 *target.pip_options(), "-r", str(lock)], limits)  # fmt: skip
    if done.returncode != 0:
        raise _refusal(done.stderr)
    size = sum(path.stat().st_size for path in downloads.iterdir())
    if size > limits.max_bytes:
        raise EntryRequirementsError(
            f"the wheels of {REQUIREMENTS} come to {size} bytes; this challenge allows at most "
            f"{limits.max_bytes}"
        )
    return downloads
