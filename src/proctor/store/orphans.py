"""The artifact sweeper: removes stored files no row refers to, once older than a grace period.

Everything is stored so that a row refers to it when the transaction recording it commits (an
upload is kept inside the transaction adding its submission, a run's logs inside the commit of
its result). A crash between the two leaves a file nothing refers to; so does a staging file
(``.upload-*``) a killed process left. :func:`sweep_orphans` removes those once they are older
than the grace period (an upload being checked or a commit in flight is younger).

A file is taken aside (renamed) before it is deleted and put back when it turns out to be in
use after all: a new upload of the same content replaced it meanwhile (another inode), or a
row referring to it committed meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from proctor.store.artifacts import ArtifactStore
from proctor.store.models import Result, SubmissionRow

STAGING_PREFIX = ".upload-"


def _stored(store: ArtifactStore) -> Iterator[tuple[str, Path]]:
    """Every artifact file as (digest, path); staging files as ("", path)."""
    if not store.root.is_dir():
        return
    for entry in store.root.iterdir():
        if entry.is_file() and entry.name.startswith(STAGING_PREFIX):
            yield "", entry
        elif entry.is_dir() and len(entry.name) == 2:
            for item in entry.iterdir():
                if item.is_file() and len(item.name) == 62:
                    yield entry.name + item.name, item


def _referenced(db: sessionmaker[Session], digests: list[str]) -> set[str]:
    """The digests among ``digests`` that a submission or a result refers to."""
    found: set[str] = set()
    with db() as session:
        for start in range(0, len(digests), 500):
            batch = digests[start : start + 500]
            found.update(
                session.scalars(
                    select(SubmissionRow.upload_sha256).where(
                        SubmissionRow.upload_sha256.in_(batch)
                    )
                )
            )
            runs = select(Result.run_artifact).where(Result.run_artifact.in_(batch))
            found.update(d for d in session.scalars(runs) if d is not None)
    return found


def sweep_orphans(
    db: sessionmaker[Session], store: ArtifactStore, grace_s: float, now: float | None = None
) -> list[Path]:
    """Remove artifacts no row refers to and staging files, older than ``grace_s``; the paths."""
    at = time.time() if now is None else now
    old: dict[Path, tuple[str, int]] = {}
    for digest, path in _stored(store):
        with contextlib.suppress(FileNotFoundError):
            stat = path.stat()
            if stat.st_mtime < at - grace_s:
                old[path] = (digest, stat.st_ino)
    referenced = _referenced(db, sorted({d for d, _ in old.values() if d}))
    removed = []
    for path, (digest, inode) in old.items():
        if digest in referenced:
            continue
        if not digest:
            path.unlink(missing_ok=True)
            removed.append(path)
        elif _remove_unless_used(db, path, digest, inode):
            removed.append(path)
    return removed


def _remove_unless_used(db: sessionmaker[Session], path: Path, digest: str, inode: int) -> bool:
    """Take ``path`` aside, then delete it unless it changed or a row now refers to it."""
    aside = path.with_name(f".sweep-{path.name}-{os.getpid()}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return False
    if aside.stat().st_ino != inode or _referenced(db, [digest]):
        os.replace(aside, path)  # a new copy or a new row: the file is in use
        return False
    aside.unlink()
    return True
