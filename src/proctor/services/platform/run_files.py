"""Reading the organizer's files back from a job's run artifact (a ``.tar.gz``).

The worker writes the organizer's files (``cases.jsonl``, logs, a
scorer's pages) first and the exam's outputs after them under ``outputs/``
(``executor.run``), so reading stops at the first output: a page view never decompresses a
VISCERAL submission's masks.
"""

from __future__ import annotations

import tarfile
from collections.abc import Collection
from dataclasses import dataclass

from proctor.executor.run import EXAM_OUTPUTS
from proctor.services.platform.resources import Platform


@dataclass(frozen=True, slots=True)
class KeptFile:
    """One file of a run artifact: its size in bytes and its content (None: over the cap)."""

    size: int
    data: bytes | None


def kept_files(
    platform: Platform, artifact: str | None, names: Collection[str], max_bytes: int
) -> dict[str, KeptFile]:
    """The files ``names`` the artifact holds (a file over ``max_bytes`` is not read)."""
    if artifact is None or not platform.artifacts.has(artifact):
        return {}
    found: dict[str, KeptFile] = {}
    outputs = EXAM_OUTPUTS.split("/", 1)[0] + "/"
    with tarfile.open(platform.artifacts.path(artifact), "r:gz") as tar:
        for member in tar:
            if member.name.startswith(outputs):
                break
            if member.name not in names or not member.isfile():
                continue
            stream = tar.extractfile(member) if member.size <= max_bytes else None
            found[member.name] = KeptFile(member.size, stream.read() if stream else None)
    return found
