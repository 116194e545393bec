"""Where built environments live: one folder per declaration digest, finished or absent.

Layout of ``STORE/DECLARATION_DIGEST/``: ``rootfs/`` (the tree, bound as the root when not
root), ``image.erofs`` (the packed tree, mounted through a private loop device as root),
``manifest.json`` and ``environment.lock``. A build works in ``DIGEST.partial-PID`` and
renames it into place when everything is written, so nothing half-built looks finished; a
leftover of a dead builder is removed by the next build or ``prune``. Builders take turns on
an ``flock`` of the store's folder itself (``building``), so two processes asking for the same
environment build it once: the second waits, then finds it finished. Nothing is left behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from proctor.environments.mounts import remove_tree
from proctor.errors import EnvironmentBuildError, InputFileError
from proctor.host import pid_alive

MANIFEST = "manifest.json"
ROOTFS = "rootfs"
IMAGE = "image.erofs"
LOCK = "environment.lock"
PARTIAL = ".partial-"


IMPORTED = "import"
"""A manifest's ``source`` for an environment loaded by ``proctor env import`` (else ``build``)."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """What the store knows of one built environment (``manifest.json``)."""

    name: str
    digest: str
    declaration_digest: str
    suite: str
    packages: dict[str, str]
    wheels: dict[str, tuple[str, str]]
    variables: dict[str, str] = field(default_factory=dict)
    tree_bytes: int = 0
    image_bytes: int = 0
    source: str = "build"

    def to_json(self) -> dict[str, Any]:
        """The manifest as written to ``manifest.json``."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        """Read a manifest written by :meth:`to_json`."""
        wheels = {name: (pair[0], pair[1]) for name, pair in data.get("wheels", {}).items()}
        return cls(**{**data, "wheels": wheels})


@dataclass(frozen=True, slots=True)
class BuiltEnvironment:
    """A finished environment in the store."""

    folder: Path
    manifest: Manifest

    @property
    def rootfs(self) -> Path:
        """The tree."""
        return self.folder / ROOTFS

    @property
    def image(self) -> Path:
        """The packed tree (erofs)."""
        return self.folder / IMAGE

    @property
    def lock(self) -> Path:
        """The lock this build produced."""
        return self.folder / LOCK


class EnvironmentStore:
    """The folder of built environments (``PROCTOR_ENV_ROOT``)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def find(self, declaration_digest: str) -> BuiltEnvironment | None:
        """The finished environment of ``declaration_digest``, or None."""
        folder = self.root / declaration_digest
        manifest = folder / MANIFEST
        if not manifest.is_file():
            return None
        return BuiltEnvironment(folder, read_manifest(manifest))

    def all(self) -> list[BuiltEnvironment]:
        """Every finished environment, by name."""
        if not self.root.is_dir():
            return []
        found = [
            self.find(entry.name) for entry in self.root.iterdir() if PARTIAL not in entry.name
        ]
        return sorted((b for b in found if b is not None), key=lambda b: b.manifest.name)

    @contextlib.contextmanager
    def building(self, declaration_digest: str) -> Iterator[None]:
        """Hold the store's build turn for ``declaration_digest`` (waits while another builds).

        One turn for the whole store: builds are CPU- and disk-bound, so taking turns costs
        little, and a lock on the folder itself leaves no file behind.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def partial(self, declaration_digest: str) -> Path:
        """A fresh work folder for building ``declaration_digest`` (leftovers removed first)."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        self.remove_leftovers()
        folder = self.root / f"{declaration_digest}{PARTIAL}{os.getpid()}"
        remove_tree(folder)
        folder.mkdir()
        return folder

    def commit(self, partial: Path, declaration_digest: str) -> BuiltEnvironment:
        """Move a finished build into place (atomic rename); a concurrent winner is kept."""
        final = self.root / declaration_digest
        try:
            os.rename(partial, final)
        except OSError:
            remove_tree(partial)  # another build finished first
        built = self.find(declaration_digest)
        if built is None:
            raise InputFileError(f"{final}: the environment was not committed")
        return built

    def leftovers(self) -> list[Path]:
        """The work folders of builders that are no longer running."""
        if not self.root.is_dir():
            return []
        found = []
        for entry in sorted(self.root.iterdir()):
            if PARTIAL not in entry.name:
                continue
            pid = entry.name.rpartition(PARTIAL)[2]
            if pid.isdigit() and pid_alive(int(pid)) and int(pid) != os.getpid():
                continue
            found.append(entry)
        return found

    def remove_leftovers(self) -> list[Path]:
        """Remove work folders of builders that are no longer running."""
        removed: list[Path] = []
        for entry in self.leftovers():
            try:
                remove_tree(entry)  # a killed bootstrap may have left /dev/shm, /proc mounted
            except EnvironmentBuildError:
                continue  # still mounted: never delete through a mount into the host's files
            removed.append(entry)
        return removed

    def remove(self, built: BuiltEnvironment) -> None:
        """Delete one finished environment (renamed away first, so it never looks half-gone)."""
        doomed = built.folder.with_name(f"{built.folder.name}{PARTIAL}0")
        os.rename(built.folder, doomed)
        remove_tree(doomed)


def read_manifest(path: Path) -> Manifest:
    """Parse ``manifest.json``; a broken one is an error naming the file."""
    try:
        return Manifest.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError) as err:
        raise InputFileError(f"{path}: not a Proctor environment manifest ({err})") from err


def write_manifest(folder: Path, manifest: Manifest) -> None:
    """Write ``manifest.json`` into ``folder``."""
    (folder / MANIFEST).write_text(json.dumps(manifest.to_json(), indent=2, sort_keys=True) + "\n")
