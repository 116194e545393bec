"""The ``environment:`` block: what root filesystem an entry's sandbox sees.

Either ``host`` (the host's own ``/usr``, for trusted local runs only; reported as such), the
name of a declaration bundled with Proctor (``environment: classic-physionet``), or a
declared environment built by ``proctor env build`` into an image every evaluation mounts
read-only as its root::

    environment:
      name: reference
      debian: {suite: bookworm, packages: [python3, gcc]}
      python: {requirements: environment/requirements.in, lock: environment/requirements.lock}
      files: [{source: environment/extra/tool, target: /usr/local/bin/tool}]
      variables: {OMP_NUM_THREADS: "1"}
      lock: environment/environment.lock
      participant_wheels: {allow: true, max_requirements: 20}   # off by default
      entry_images: {allow: true, max_bytes: 4294967296}      # off by default

Python libraries come as wheels from one lock with hashes (``proctor env lock``), never from
Debian's ``python3-*`` packages of the same libraries (a wheel pulling numpy 2 over Debian's
numpy breaks the Debian packages built against it): such a mix is refused at load.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from proctor.spec.protocols import LocatedError, Strict

PackageName = str
_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class DebianSpec(Strict):
    """A Debian suite and the packages to install (``minbase`` plus these).

    ``mirror``: the archive to build from; absent, the build tool's default.
    """

    suite: str = "bookworm"
    packages: tuple[PackageName, ...] = ()
    mirror: str | None = None

    @field_validator("packages")
    @classmethod
    def _package_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for index, name in enumerate(names):
            if not _PACKAGE.match(name):
                raise LocatedError(f"{name!r} is not a Debian package name", f"[{index}]")
        return names


class PythonSpec(Strict):
    """Python libraries as wheels.

    ``requirements``: what the organizer asks for; ``lock``: the resolved closure with hashes
    that builds install (written by ``proctor env lock``).
    """

    requirements: Path
    lock: Path


class FileSpec(Strict):
    """A file or folder of the challenge copied into the image at ``target`` (absolute)."""

    source: Path
    target: str

    @field_validator("target")
    @classmethod
    def _absolute_target(cls, target: str) -> str:
        path = PurePosixPath(target)
        if not path.is_absolute() or ".." in path.parts or str(path) == "/":
            raise ValueError(f"{target!r} must be an absolute path below '/' without '..'")
        if path.parts[1] in {"proc", "dev", "tmp", "sys", "run"}:
            raise ValueError(f"{target!r} would be hidden by the sandbox's own /{path.parts[1]}")
        return str(path)


class ParticipantWheels(Strict):
    """Whether (and how much) an entry may add Python wheels with its own ``requirements.txt``.

    Resolved by the host at prep from the configured index only, wheels only, every version
    pinned and every hash recorded, into a layer shown read-only at ``/wheels`` (on
    ``PYTHONPATH``); evaluation itself never has network. The request is hostile input, so it
    is capped: requirements, total wheel bytes, resolver seconds and memory.
    """

    allow: bool = Field(default=False, strict=True)
    max_requirements: int = Field(default=20, gt=0, le=500, strict=True)
    max_bytes: int = Field(default=256 * 1024**2, gt=0, strict=True)
    resolve_s: float = Field(default=120.0, gt=0, strict=True)
    resolve_memory_bytes: int = Field(default=1024**3, gt=0, strict=True)


class EntryImageBuild(Strict):
    """The limits of building an entry's ``Dockerfile`` (its ``prep`` stage): seconds and bytes."""

    wall_s: float = Field(default=1800.0, gt=0, strict=True)
    memory_bytes: int = Field(default=4 * 1024**3, gt=0, strict=True)
    disk_bytes: int = Field(default=8 * 1024**3, gt=0, strict=True)


_IMAGE_REFERENCE = re.compile(r"^[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$")
_ENVIRONMENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class EntryImages(Strict):
    """Whether (and how big) an entry may bring its own root filesystem.

    An entry brings ``image.tar`` or ``image.tar.gz`` (``docker save``, ``podman save`` or an
    OCI layout archive), or a ``Dockerfile`` that Proctor builds within ``build``'s limits.
    ``max_bytes`` caps the archive (uncompressed) and the unpacked root, ``max_files`` the
    members of all its layers together. ``bases`` maps public image names a ``Dockerfile``'s
    ``FROM`` may use to declared environments' names (``python:3.10.1-buster:
    physionet-py310``; the loader refuses a name the challenge does not declare); every
    declared environment is also a base as ``proctor/NAME``, and every environment imported
    with ``proctor env import`` is one by its own name.
    """

    allow: bool = Field(default=False, strict=True)
    max_bytes: int = Field(default=4 * 1024**3, gt=0, strict=True)
    max_files: int = Field(default=100_000, gt=0, strict=True)
    build: EntryImageBuild = EntryImageBuild()
    bases: dict[str, str] = Field(default_factory=dict)

    @field_validator("bases")
    @classmethod
    def _base_names(cls, bases: dict[str, str]) -> dict[str, str]:
        for public, declared in bases.items():
            if not _IMAGE_REFERENCE.match(public):
                raise LocatedError(
                    f"{public!r} is not an image name (such as python:3.10.1-buster)", public
                )
            if not _ENVIRONMENT_NAME.match(declared):
                raise LocatedError(f"{declared!r} is not an environment's name", public)
        return bases


class EnvironmentSpec(Strict):
    """A declared environment (see the module docstring)."""

    name: str = Field(default="environment", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    debian: DebianSpec = DebianSpec()
    python: PythonSpec | None = None
    files: tuple[FileSpec, ...] = ()
    variables: dict[str, str] = Field(default_factory=dict)
    lock: Path | None = None
    participant_wheels: ParticipantWheels = ParticipantWheels()
    entry_images: EntryImages = EntryImages()

    @field_validator("variables")
    @classmethod
    def _variable_names(cls, variables: dict[str, str]) -> dict[str, str]:
        for name in variables:
            if not _VARIABLE.match(name):
                raise LocatedError(f"{name!r} is not a variable name", name)
        return variables

    @model_validator(mode="after")
    def _no_mixed_python_libraries(self) -> EnvironmentSpec:
        if self.python is None:
            return self
        for index, name in enumerate(self.debian.packages):
            if name.startswith("python3-") and name not in ALLOWED_DEBIAN_PYTHON:
                raise LocatedError(
                    f"Debian's {name} would mix with the wheel lock (a wheel pulling numpy 2 over "
                    "Debian's numpy 1.24 breaks every Debian package built against it): list "
                    "the library in the requirements instead",
                    f"debian.packages[{index}]",
                )
        return self


ALLOWED_DEBIAN_PYTHON = frozenset({"python3-venv", "python3-dev", "python3-distutils"})
"""Debian ``python3-*`` packages that are tooling, not libraries a wheel could replace."""

HOST: Literal["host"] = "host"

BundledName = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")]
"""``host``, or the name of a bundled declaration (``classic-physionet``: the file
``proctor/challenges/environment-classic-physionet/environment.yaml``), replaced by that
declaration when the challenge loads."""

Environment = EnvironmentSpec | BundledName
"""``host``, a bundled declaration's name, or a declared environment."""
