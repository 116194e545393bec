"""Install or update a challenge: a versioned copy of its bundle, named by its sha256.

The bundle folder (or a bundled challenge's, or an uploaded archive's) is copied under
``DATA/challenges/NAME/SHA`` with the files it names outside its folder (a shared
``../environment``) at the same relative place, so the copy loads exactly as the original.
Installing the same content again changes nothing; new content becomes the next version, and
new submissions use the newest version while earlier ones keep theirs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypedDict

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from proctor.challenges import bundled_root
from proctor.entries import unpack_entry
from proctor.errors import ForbiddenError, NotFoundError, UsageError
from proctor.resolve import load_challenge
from proctor.services.local.catalog import resolve_challenge
from proctor.services.local.environments import tasks_on_host
from proctor.services.platform.accounts import Principal
from proctor.services.platform.phase_times import with_overrides
from proctor.services.platform.resources import Platform
from proctor.services.untrusted_tree import copy_inside
from proctor.spec import Challenge
from proctor.store.models import ChallengeVersion, PhaseRow


class InstalledJson(TypedDict):
    """The install's JSON answer (``answers.Installed`` on the wire)."""

    challenge: str
    version: int
    sha256: str
    phases: list[str]
    changed: bool


@dataclass(frozen=True, slots=True)
class Installed:
    """A challenge version as installed."""

    name: str
    version: int
    sha256: str
    phases: tuple[str, ...]
    changed: bool

    def to_json(self) -> InstalledJson:
        """The install's JSON answer."""
        return {
            "challenge": self.name,
            "version": self.version,
            "sha256": self.sha256,
            "phases": list(self.phases),
            "changed": self.changed,
        }


def _paths(value: Any) -> Iterator[Path]:
    if isinstance(value, Path):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _paths(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _paths(item)


def _outside_files(challenge: Challenge) -> list[Path]:
    """Files and folders the challenge names outside its own folder (shared environments).

    A bundled environment's declaration (``environment: codabench``, as an imported bundle
    names it) is not copied: the name stays in the copy and loads the same declaration.
    """
    root = challenge.root.resolve()
    bundled = bundled_root().resolve()
    found = []
    for path in _paths(challenge.model_dump()):
        real = (root / path).resolve()
        if real.exists() and not real.is_relative_to(root):
            if real.is_relative_to(bundled) and not real.is_relative_to(root.parent):
                continue
            if not real.is_relative_to(root.parent):
                raise UsageError(
                    f"{real} lies outside {root.parent}: keep what the challenge names in its "
                    "folder or next to it"
                )
            found.append(real)
    return found


def _cache(name: str) -> bool:
    return name == "__pycache__"


def _copy_bundle(challenge: Challenge, staging: Path) -> Path:
    """Copy the bundle (and what it names beside it) into ``staging``; the copy's folder.

    Links are resolved inside the folder they are in (``services.untrusted_tree``): one leaving
    it is refused, naming it, so nothing else on the server reaches the installed copy. The
    files named beside the folder are real paths already (``_outside_files``).
    """
    root = challenge.root.resolve()
    dest = staging / root.name
    copy_inside(challenge.root, dest, skip=_cache)
    for extra in _outside_files(challenge):
        target = staging / extra.relative_to(root.parent)
        target.parent.mkdir(parents=True, exist_ok=True)
        if extra.is_dir():
            copy_inside(extra, target, skip=_cache, exist_ok=True)
        else:
            shutil.copy2(extra, target)
    return dest


def tree_sha256(folder: Path) -> str:
    """The sha256 of a tree: every file's relative path and bytes, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with path.open("rb") as stream:
            while chunk := stream.read(1024 * 1024):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def check_servable(challenge: Challenge, platform: Platform) -> None:
    """Refuse ``environment: host`` (the host's /usr shown to entries) unless allowed."""
    if platform.settings.allow_host_environment:
        return
    for task in tasks_on_host(challenge, (t.name for t in challenge.tasks))[:1]:
        raise UsageError(
            f"challenge {challenge.name!r} runs task {task!r} on the host "
            "('environment: host'), which shows the host's /usr to entries: declare an "
            "environment, or start the server with PROCTOR_ALLOW_HOST_ENVIRONMENT=1 if "
            "every participant is trusted"
        )


def check_installer(principal: Principal) -> None:
    """Refuse a caller who is not an organizer (before an upload is even read)."""
    if not principal.organizer:
        raise ForbiddenError("only organizers install challenges")


def install(platform: Platform, principal: Principal, ref: str) -> Installed:
    """Install challenge ``ref`` (a bundle folder on the server or a bundled name)."""
    check_installer(principal)
    challenge = resolve_challenge(ref)
    check_servable(challenge, platform)
    base = platform.settings.data.resolve() / "challenges" / challenge.name
    base.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".install-", dir=base))
    try:
        copy = _copy_bundle(challenge, staging)
        sha = tree_sha256(staging)
        final = base / sha[:16]
        if not final.exists():
            os.rename(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    installed = load_challenge(final / copy.name)
    return _record(platform, principal, installed, sha)


def install_archive(platform: Platform, principal: Principal, upload: BinaryIO) -> Installed:
    """Install a challenge from an uploaded archive of its bundle folder (a binary stream)."""
    check_installer(principal)
    with tempfile.TemporaryDirectory(dir=platform.settings.data) as scratch:
        archive = Path(scratch) / "bundle-archive"
        with archive.open("wb") as out:
            shutil.copyfileobj(upload, out)
        root = unpack_entry(archive, Path(scratch) / "bundle")
        return install(platform, principal, str(root))


def _record(platform: Platform, principal: Principal, challenge: Challenge, sha: str) -> Installed:
    """The version row for ``sha`` (new when the content is new) and its phases."""
    phases = tuple(p.name for p in challenge.phases)
    with platform.db.begin() as session:
        latest = session.scalar(
            select(ChallengeVersion)
            .where(ChallengeVersion.name == challenge.name)
            .order_by(ChallengeVersion.version.desc())
        )
        if latest is not None and latest.sha256 == sha:
            return Installed(challenge.name, latest.version, sha, phases, changed=False)
        number = (
            session.scalar(
                select(func.max(ChallengeVersion.version)).where(
                    ChallengeVersion.name == challenge.name
                )
            )
            or 0
        ) + 1
        row = ChallengeVersion(
            name=challenge.name,
            version=number,
            sha256=sha,
            path=str(challenge.root),
            created=time.time(),
        )
        session.add(row)
        session.flush()
        for phase in challenge.phases:
            session.add(
                PhaseRow(
                    challenge_id=row.id,
                    name=phase.name,
                    opens=phase.opens.timestamp() if phase.opens else None,
                    closes=phase.closes.timestamp() if phase.closes else None,
                )
            )
    platform.audit(principal.name, "challenge.install", f"{challenge.name} v{number}", sha)
    return Installed(challenge.name, number, sha, phases, changed=True)


def current(platform: Platform, name: str) -> tuple[ChallengeVersion, Challenge]:
    """The newest installed version of challenge ``name`` and its loaded description."""
    with platform.db() as session:
        row = session.scalar(
            select(ChallengeVersion)
            .where(ChallengeVersion.name == name)
            .order_by(ChallengeVersion.version.desc())
        )
    if row is None:
        from proctor.errors import NotFoundError

        raise NotFoundError(f"no challenge {name!r} is installed on this server")
    return row, with_overrides(platform, _load(row.path))


def version_of(session: Session, challenge_id: int) -> Challenge:
    """The loaded description of installed version ``challenge_id`` (a submission's own)."""
    row = session.get(ChallengeVersion, challenge_id)
    if row is None:
        raise NotFoundError(f"no installed challenge version {challenge_id}")
    return _load(row.path)


_loaded: dict[str, Challenge] = {}


def _load(path: str) -> Challenge:
    if path not in _loaded:
        _loaded[path] = load_challenge(Path(path))
    return _loaded[path]


def installed_names(platform: Platform) -> list[str]:
    """Names of the installed challenges."""
    with platform.db() as session:
        return sorted(set(session.scalars(select(ChallengeVersion.name))))
