"""What an entry's own image held, read back from each job's run artifact.

A job that ran in the entry's own image keeps ``entry-image.json`` (its digest, its base, the
size of its tree, the Debian packages and Python distributions read from the tree) and, for an
image built from the entry's ``Dockerfile``, a copy of that file and the build's log
(``store.runfolder.ENTRY_IMAGE_FILES``). The console's record shows the facts and links the
files (organizers only: :func:`image_file`); ``proctor logs`` prints the facts in one line.

The entry's own team sees the facts of its image too (:func:`own_images`): the image is the
team's own, read from its tree before any of the entry's code ran and never written by a
stage, so it says nothing of hidden data. The team is not served the files here: the
``Dockerfile`` is its own upload, and the build log is prep's diagnostics, disclosed as prep's
output is (in the report).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from sqlalchemy import select

from proctor.errors import NotFoundError
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import EntryImageFacts, SubmissionImages, TaskImage
from proctor.services.platform.console import organizers_only
from proctor.services.platform.resources import Platform
from proctor.services.platform.run_files import KeptFile, kept_files
from proctor.services.platform.submission_ids import full_id
from proctor.services.platform.submissions import visible_submission
from proctor.store.models import Job, Result
from proctor.store.runfolder import ENTRY_IMAGE_FILES, ENTRY_IMAGE_RECORD

IMAGE_FILES = {PurePosixPath(path).name: path for path in ENTRY_IMAGE_FILES}
"""A kept file's name in links (``Dockerfile``) → its path in the run artifact."""
MAX_FILE_BYTES = 64 * 1024**2
"""A kept file larger than this is not read (the build log is capped far below)."""
MEDIA_TYPES = {"entry-image.json": "application/json"}
SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")
"""Characters a download's file name leaves out (it is quoted in a header)."""


@dataclass(frozen=True, slots=True)
class ImageFile:
    """One kept file of an entry's image, to download: its name, its bytes, its media type."""

    filename: str
    data: bytes
    media_type: str


def facts(found: Mapping[str, KeptFile]) -> EntryImageFacts | None:
    """The image facts of the kept files ``found`` (None without a readable record)."""
    kept = found.get(ENTRY_IMAGE_RECORD)
    if kept is None or kept.data is None:
        return None
    try:
        data = json.loads(kept.data)
        return _facts(data)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _facts(data: Mapping[str, Any]) -> EntryImageFacts:
    """``entry-image.json`` (``EntryImage.to_json``) as the answer shows it."""
    tree_bytes, files = data.get("tree_bytes"), data.get("files")
    return EntryImageFacts(
        digest=str(data["digest"]),
        base=str(data["base"]) if data.get("base") else None,
        tree_bytes=int(tree_bytes) if tree_bytes else None,
        files=int(files) if files else None,
        debian={str(k): str(v) for k, v in sorted(dict(data.get("packages") or {}).items())},
        python={str(k): str(v) for k, v in sorted(dict(data.get("python") or {}).items())},
    )


def kept_names(found: Mapping[str, KeptFile]) -> list[str]:
    """The names (``Dockerfile``, ``build.log``, ``entry-image.json``) of the files ``found``."""
    return [name for name, path in IMAGE_FILES.items() if path in found]


def image_file(
    platform: Platform, principal: Principal, sid: str, task: str, name: str
) -> ImageFile:
    """Kept file ``name`` of the entry's image of ``sid``'s ``task`` (organizers only)."""
    organizers_only(principal)
    sid = full_id(platform, principal, sid)
    path = IMAGE_FILES.get(name)
    if path is None:
        known = ", ".join(IMAGE_FILES)
        raise NotFoundError(f"no image file {name!r}: the run keeps {known}")
    kept = kept_files(platform, _artifact(platform, sid, task), {path}, MAX_FILE_BYTES).get(path)
    if kept is None or kept.data is None:
        raise NotFoundError(f"task {task!r} of submission {sid} kept no {name}")
    platform.audit(principal.name, "submission.image_file", sid, f"{task} {name}")
    media = MEDIA_TYPES.get(name, "text/plain; charset=utf-8")
    return ImageFile(SAFE_NAME.sub("_", f"{sid}-{task}-{name}"), kept.data, media)


def own_images(platform: Platform, principal: Principal | None, sid: str) -> SubmissionImages:
    """The images the tasks of ``sid`` ran in, for its team (and organizers); else not found."""
    sid = full_id(platform, principal, sid)
    with platform.db() as session:
        visible_submission(session, principal, sid)
        rows = session.execute(
            select(Job.task, Result.run_artifact)
            .join(Result, Result.job_id == Job.id)
            .where(Job.submission_id == sid)
            .order_by(Job.id)
        ).all()
    tasks = []
    for task, artifact in rows:
        found = facts(kept_files(platform, artifact, {ENTRY_IMAGE_RECORD}, MAX_FILE_BYTES))
        if found is not None:
            tasks.append(TaskImage(task=task, image=found))
    return SubmissionImages(submission=sid, tasks=tasks)


def _artifact(platform: Platform, sid: str, task: str) -> str | None:
    """The run artifact of ``sid``'s job of ``task``; ``NotFoundError`` without that task."""
    with platform.db() as session:
        row = session.execute(
            select(Job.id, Result.run_artifact)
            .outerjoin(Result, Result.job_id == Job.id)
            .where(Job.submission_id == sid, Job.task == task)
        ).first()
    if row is None:
        raise NotFoundError(f"submission {sid} has no task {task!r}")
    artifact: str | None = row[1]
    return artifact
