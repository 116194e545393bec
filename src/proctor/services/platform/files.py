"""A challenge's Files: each phase's public data, the starting kit, environment images, extras.

The files of an installed challenge version are built once, on first listing, into
``DATA/files/NAME/vVERSION-SHA`` (an ``index.json`` beside them), and served from there: a
download names a file of that index, never a path, so nothing outside it can be reached.
Environment images (the OCI archive ``proctor env export`` writes) are exported once per
declaration digest into ``DATA/files/environments/`` when the environment is built in the
server's store (an environment not built yet is listed once a job has built it).

Every access decision is :func:`may_download`; a caller it refuses gets "not found".
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from proctor.environments.digests import declaration_digest
from proctor.environments.oci import export_oci
from proctor.environments.store import BuiltEnvironment
from proctor.errors import NotFoundError
from proctor.services.local.catalog import copy_public_data, write_kit
from proctor.services.local.environments import store_of
from proctor.services.platform.accounts import Principal
from proctor.services.platform.file_answers import ChallengeFile, FileListing, Kind
from proctor.services.platform.installs import current
from proctor.services.platform.registrations import may_participate
from proctor.services.platform.resources import Platform
from proctor.spec import Challenge
from proctor.spec.environment import EnvironmentSpec
from proctor.store.models import ChallengeVersion

INDEX = "index.json"
_building = threading.Lock()


def may_download(platform: Platform, principal: Principal | None, challenge: Challenge) -> bool:
    """Whether ``principal`` may list and download ``challenge``'s files.

    Anyone when the challenge says ``files_public: true``; otherwise whoever may take part
    (``registrations.may_participate``: organizers, and registered, approved participants,
    or anyone signed in where the challenge asks for no registration).
    """
    return challenge.files_public or may_participate(platform, principal, challenge)


def listing(platform: Platform, principal: Principal | None, name: str) -> FileListing:
    """The files of challenge ``name`` (built on first call); not found when not allowed."""
    row, challenge = _allowed(platform, principal, name)
    rows = [
        ChallengeFile(**item, url=api_url(name, item["name"]))
        for item in _index(platform, row.version, row.sha256, challenge)
    ]
    rows += [
        ChallengeFile(**item, url=api_url(name, item["name"]))
        for item, _ in _environment_files(platform, challenge)
    ]
    return FileListing(challenge=name, version=row.version, files=rows)


def open_file(
    platform: Platform, principal: Principal | None, name: str, file: str
) -> tuple[ChallengeFile, Path]:
    """The listed file called ``file`` and its path on disk; not found otherwise."""
    row, challenge = _allowed(platform, principal, name)
    folder = _version_folder(platform, name, row.version, row.sha256)
    for item in _index(platform, row.version, row.sha256, challenge):
        if item["name"] == file:
            return ChallengeFile(**item, url=api_url(name, file)), folder / file
    for item, path in _environment_files(platform, challenge):
        if item["name"] == file:
            return ChallengeFile(**item, url=api_url(name, file)), path
    raise NotFoundError(f"challenge {name!r} has no file {file!r}")


def api_url(challenge: str, file: str) -> str:
    """The API address of a file (relative to the server)."""
    return f"/api/v1/challenges/{quote(challenge, safe='')}/files/{quote(file, safe='')}"


def _allowed(
    platform: Platform, principal: Principal | None, name: str
) -> tuple[ChallengeVersion, Challenge]:
    row, challenge = current(platform, name)
    if not may_download(platform, principal, challenge):
        raise NotFoundError(f"no challenge {name!r} is installed on this server")
    return row, challenge


def _version_folder(platform: Platform, name: str, version: int, sha256: str) -> Path:
    return platform.settings.data.resolve() / "files" / name / f"v{version}-{sha256[:16]}"


def _index(
    platform: Platform, version: int, sha256: str, challenge: Challenge
) -> list[dict[str, Any]]:
    """The rows of a version's files, building them first when they are not on disk."""
    folder = _version_folder(platform, challenge.name, version, sha256)
    if not (folder / INDEX).is_file():
        with _building:
            if not (folder / INDEX).is_file():
                _build(challenge, folder)
    rows: list[dict[str, Any]] = json.loads((folder / INDEX).read_text(encoding="utf-8"))
    return rows


def _build(challenge: Challenge, folder: Path) -> None:
    """Write every file of the version and its index into ``folder`` (atomically)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=folder.parent))
    try:
        rows = list(_write_files(challenge, staging))
        (staging / INDEX).write_text(json.dumps(rows, indent=2), encoding="utf-8")
        _publish(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _write_files(challenge: Challenge, staging: Path) -> Iterator[dict[str, Any]]:
    with tempfile.TemporaryDirectory(dir=staging) as scratch:
        kit = Path(scratch) / "kit"
        write_kit(str(challenge.root), kit)
        name = f"{challenge.name}-kit.tar.gz"
        yield _row(_tar(kit, staging / name), None, "kit", "Starting kit and local replica")
        for phase in challenge.phases:
            data = Path(scratch) / f"data-{phase.name}"
            copy_public_data(challenge, phase, data)
            name = f"{challenge.name}-{phase.name}-data.tar.gz"
            title = f"Public data of phase {phase.name}"
            yield _row(_tar(data, staging / name), phase.name, "data", title)
    for item in challenge.files:
        target = staging / item.path.name
        number = 1
        while target.exists() or target.name == INDEX:  # a name taken, or the index's
            number += 1
            target = staging / f"{number}-{item.path.name}"
        shutil.copyfile(item.path, target)
        yield _row(target, item.phase, "other", item.title or item.path.name)


def _row(path: Path, phase: str | None, kind: Kind, title: str) -> dict[str, Any]:
    return {
        "name": path.name,
        "phase": phase,
        "kind": kind,
        "size": path.stat().st_size,
        "sha256": file_sha256(path),
        "title": title,
    }


def file_sha256(path: Path) -> str:
    """The sha256 (hex) of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def _tar(folder: Path, archive: Path) -> Path:
    """A gzipped tar of ``folder``'s content (no top folder), the same bytes for the same files.

    Members sorted, owners and times reset, the gzip header's time 0: a version's files built
    again (another server, a cleared cache) keep their sha256.
    """

    def plain(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        return info

    with (
        archive.open("wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as packed,
        tarfile.open(fileobj=packed, mode="w", format=tarfile.PAX_FORMAT) as out,
    ):
        for path in sorted(folder.rglob("*")):
            out.add(path, path.relative_to(folder).as_posix(), recursive=False, filter=plain)
    return archive


def _environment_files(
    platform: Platform, challenge: Challenge
) -> list[tuple[dict[str, Any], Path]]:
    """Each declared environment built in the store: its image archive and its lock."""
    found: dict[str, EnvironmentSpec] = {}
    for task in challenge.tasks:
        declared = (challenge.environment_of(task.name), challenge.scorer_environment_of(task.name))
        for spec in declared:
            if spec is not None:
                found.setdefault(declaration_digest(spec), spec)
    rows = []
    for digest, spec in found.items():
        built = store_of(platform.host).find(digest)
        if built is None:
            continue
        folder = platform.settings.data.resolve() / "files" / "environments" / digest[:16]
        archive = folder / f"environment-{spec.name}.tar"
        if not (folder / INDEX).is_file():
            with _building:
                if not (folder / INDEX).is_file():
                    _export(built, spec, folder, archive)
        for row in json.loads((folder / INDEX).read_text(encoding="utf-8")):
            rows.append((row, folder / row["name"]))
    return rows


def _export(built: BuiltEnvironment, spec: EnvironmentSpec, folder: Path, archive: Path) -> None:
    """Export ``built`` as an OCI archive with its lock into ``folder`` (atomically)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=folder.parent))
    try:
        image = export_oci(built, staging / archive.name)
        title = f"Environment {spec.name} (OCI image {image[:19]}…): proctor env import FILE"
        rows = [_row(staging / archive.name, None, "environment", title)]
        if built.lock.is_file():
            lock = staging / f"environment-{spec.name}.lock"
            shutil.copyfile(built.lock, lock)
            rows.append(_row(lock, None, "environment", f"Lock of environment {spec.name}"))
        (staging / INDEX).write_text(json.dumps(rows, indent=2), encoding="utf-8")
        _publish(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _publish(staging: Path, folder: Path) -> None:
    """Rename the built ``staging`` to ``folder``; another process that built it first wins."""
    try:
        os.rename(staging, folder)
    except OSError:
        if not (folder / INDEX).is_file():
            raise
