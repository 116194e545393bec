"""``environment.lock``: every Debian package with its version and every wheel with its hash.

Written by the first build of an environment and shipped with the challenge (like PhysioNet's
published package list); later builds must reproduce it exactly. Plain text, one line each::

    # proctor environment lock: NAME
    suite bookworm
    deb libc6=2.36-9+deb12u10
    wheel numpy==2.4.6 sha256:89cd…
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from proctor.errors import InputFileError


@dataclass(frozen=True, slots=True)
class EnvironmentLock:
    """What one build installed: Debian package → version, wheel name → (version, sha256)."""

    suite: str
    debian: dict[str, str] = field(default_factory=dict)
    wheels: dict[str, tuple[str, str]] = field(default_factory=dict)

    def render(self, name: str) -> str:
        """The file's text (sorted, so two equal locks are byte-identical)."""
        lines = [f"# proctor environment lock: {name}", f"suite {self.suite}"]
        lines += [f"deb {package}={version}" for package, version in sorted(self.debian.items())]
        lines += [
            f"wheel {wheel}=={version} sha256:{digest}"
            for wheel, (version, digest) in sorted(self.wheels.items())
        ]
        return "\n".join(lines) + "\n"

    def differences(self, other: EnvironmentLock) -> list[str]:
        """How ``other`` (a new build) differs from this lock, one line per package."""
        found = [] if self.suite == other.suite else [f"suite {self.suite} → {other.suite}"]
        for kind, mine, theirs in (
            ("deb", self.debian, other.debian),
            ("wheel", {k: v[0] for k, v in self.wheels.items()},
             {k: v[0] for k, v in other.wheels.items()}),
        ):  # fmt: skip
            for name in sorted(set(mine) | set(theirs)):
                if mine.get(name) != theirs.get(name):
                    was, now = mine.get(name, "absent"), theirs.get(name, "absent")
                    found.append(f"{kind} {name}: locked {was}, built {now}")
        return found


def read_lock(path: Path) -> EnvironmentLock:
    """Parse an ``environment.lock``; a malformed line is an error naming file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise InputFileError(f"{path}: cannot read the environment lock ({err})") from err
    suite = ""
    debian: dict[str, str] = {}
    wheels: dict[str, tuple[str, str]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        kind, _, rest = line.partition(" ")
        if kind == "suite" and rest:
            suite = rest
        elif kind == "deb" and "=" in rest:
            package, _, version = rest.partition("=")
            debian[package] = version
        elif kind == "wheel" and "==" in rest and " sha256:" in rest:
            spec, _, digest = rest.partition(" sha256:")
            wheel, _, version = spec.partition("==")
            wheels[wheel] = (version, digest)
        else:
            raise InputFileError(
                f"{path}, line {number}: expected 'suite S', 'deb NAME=VERSION' or "
                f"'wheel NAME==VERSION sha256:HASH', got {line[:80]!r}; rebuild it with "
                "proctor env build"
            )
    if not suite:
        raise InputFileError(f"{path}: no 'suite' line; rebuild it with proctor env build")
    return EnvironmentLock(suite, debian, wheels)
