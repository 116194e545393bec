"""A participant's side of a challenge's Files: download, check the sha256, unpack the kit.

``fetch_kit`` is ``proctor kit NAME DEST --server URL``: the kit archive is downloaded beside
``DEST`` (resumed if a previous try left part of it), its sha256 checked against the listing,
then unpacked into ``DEST`` with the layout of a local kit. ``fetch_files`` is ``proctor
files NAME --download DEST``.
"""

from __future__ import annotations

import hashlib
import tarfile
from dataclasses import dataclass
from pathlib import Path

from proctor.errors import NotFoundError, PlatformError, UsageError
from proctor.services.platform.client import Client
from proctor.services.platform.file_answers import ChallengeFile


@dataclass(frozen=True, slots=True)
class Fetched:
    """A file downloaded and checked: where it is, its listing row."""

    path: Path
    file: ChallengeFile


def sha256_of(path: Path) -> str:
    """The sha256 (hex) of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def fetch(client: Client, file: ChallengeFile, dest: Path) -> Fetched:
    """Download ``file`` to ``dest`` (resuming a partial one) and check its size and sha256.

    A copy that does not match is removed, so the next try starts afresh.
    """
    if dest.is_file() and dest.stat().st_size > file.size:
        dest.unlink()
    client.download(file.url, dest)
    if dest.stat().st_size != file.size or sha256_of(dest) != file.sha256:
        dest.unlink()
        raise PlatformError(
            f"{file.name} does not match its listed sha256 {file.sha256}: download it again"
        )
    return Fetched(dest, file)


def fetch_kit(client: Client, challenge: str, dest: Path) -> Fetched:
    """Download ``challenge``'s starting kit, check it, unpack it into ``dest`` (new or empty)."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"{dest} is not an empty folder: choose a new folder for the kit")
    kits = [row for row in client.files(challenge).files if row.kind == "kit"]
    if not kits:
        raise NotFoundError(f"challenge {challenge!r} lists no starting kit")
    dest.parent.mkdir(parents=True, exist_ok=True)
    archive = dest.parent / f".{dest.name}.{kits[0].name}.part"
    fetched = fetch(client, kits[0], archive)
    dest.mkdir(exist_ok=True)
    with tarfile.open(archive) as kit:
        kit.extractall(dest, filter="data")  # no member may leave dest, nor be a device
    archive.unlink()
    return Fetched(dest, fetched.file)


def fetch_files(
    client: Client, challenge: str, dest: Path, names: tuple[str, ...] = ()
) -> list[Fetched]:
    """Download every file of ``challenge`` (or those ``names``) into folder ``dest``."""
    rows = client.files(challenge).files
    unknown = sorted(set(names) - {row.name for row in rows})
    if unknown:
        listed = ", ".join(row.name for row in rows)
        raise UsageError(f"no file {unknown[0]!r} in challenge {challenge!r} (files: {listed})")
    dest.mkdir(parents=True, exist_ok=True)
    return [fetch(client, row, dest / row.name) for row in rows if not names or row.name in names]
