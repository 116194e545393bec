"""An entry that brings its own root filesystem: ``image.tar`` or ``image.tar.gz`` at its root.

Before prep, host side: where the task's environment allows entry images
(``environment.entry_images.allow``), the archive is taken out of the entry (the rest of the
upload is the entry as the protocol mounts it), imported into the environment store by digest
(``environments.entry_images``) and becomes the job's environment: every stage of that entry
runs with the image's tree as its read-only root, in the same sandbox as a declared
environment. Where they are not allowed, an entry bringing one is refused. Any refusal is the
entry's failure at prep.

The image's ``ENV`` is the runs' environment (the organizer's declared ``variables`` win; the
sandbox keeps its own ``HOME`` and ``TMPDIR``); a ``USER`` of root, or any other, runs as the
slot's unprivileged uid; ``WORKDIR`` is kept on the job for protocols that honour it (the
entry's own files are in the protocol's working folder).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Mapping
from pathlib import Path

from proctor.entries.limits import ArchiveLimits, MiB
from proctor.environments.entry_images import (
    ARCHIVE_NAMES,
    EntryImage,
    ImageLimits,
    import_archive,
)
from proctor.environments.image_archive import ImageConfig
from proctor.environments.store import EnvironmentStore
from proctor.errors import EntryImageError
from proctor.pipeline.job import JobEnvironment, TaskJob
from proctor.pipeline.report import ENTRY_IMAGE, EnvironmentInfo
from proctor.sandbox.rootfs import RootFilesystem
from proctor.spec.model import Challenge

TAKEN = "entry-image"
"""The run folder's folder holding the archive taken out of the entry."""

RECORD = "entry-image.json"
"""The run folder's record of the image a job ran in (digest, base, packages): an artifact."""

KEPT_VARIABLES = frozenset({"HOME", "TMPDIR", "PWD"})
"""Variables of an image's ``ENV`` the sandbox keeps its own values of."""


def upload_limits(challenge: Challenge) -> ArchiveLimits:
    """The caps on an upload of ``challenge``: larger where entries may bring an image."""
    limits = ArchiveLimits(max_files=challenge.limits.entry_files)
    biggest = 0
    for task in challenge.tasks:
        spec = challenge.environment_of(task.name)
        if spec is not None and spec.entry_images.allow:
            biggest = max(biggest, spec.entry_images.max_bytes)
    if not biggest:
        return limits
    room = biggest + 64 * MiB
    return dataclasses.replace(
        limits,
        max_member_bytes=max(limits.max_member_bytes, room),
        max_total_bytes=max(limits.max_total_bytes, room + limits.max_total_bytes),
    )


def take_archive(entry_root: Path, run_folder: Path) -> Path | None:
    """Move the entry's image archive out of the entry, into the run folder; None without one.

    Several jobs of one submission may call this at once: one moves it, all find it moved.
    """
    taken = run_folder / TAKEN
    for name in ARCHIVE_NAMES:
        source, dest = entry_root / name, taken / name
        if source.is_symlink():
            raise EntryImageError(f"{name} is a link: put the image archive itself in the entry")
        if source.is_file():
            taken.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):  # another job moved it first
                os.rename(source, dest)
        if dest.is_file():
            return dest
    return None


def with_entry_image(job: TaskJob) -> tuple[TaskJob, EntryImage | None]:
    """``job`` running in its entry's own image, when the entry brings one.

    Raises ``EntryImageError`` when the image is not allowed or cannot be used.
    """
    archive = take_archive(job.entry_root, job.folder.root)
    if archive is None:
        return job, None
    declared = job.environment
    allowed = declared.entry_images if declared is not None else None
    if declared is None or allowed is None or not allowed.allow or declared.store_root is None:
        raise EntryImageError(
            f"this challenge does not run entries in their own image: remove {archive.name} "
            "and use the libraries its environment declares (see the kit)"
        )
    image = import_archive(archive, EnvironmentStore(declared.store_root), ImageLimits.of(allowed))
    record = job.folder.root / RECORD
    record.write_text(json.dumps(image.to_json(), indent=2, sort_keys=True) + "\n")
    environment = image_environment(image, declared)
    return dataclasses.replace(job, environment=environment), image


def image_environment(image: EntryImage, declared: JobEnvironment) -> JobEnvironment:
    """The job environment of ``image``, under the rules of the ``declared`` one it replaces."""
    root = RootFilesystem(image.rootfs, image.image if image.image.is_file() else None)
    info = EnvironmentInfo(name=ENTRY_IMAGE, digest=image.digest, base=image.base)
    return JobEnvironment(
        root,
        info,
        image_variables(image.config, declared.variables),
        entry_images=declared.entry_images,
        store_root=declared.store_root,
        workdir=image.config.workdir,
    )


def image_variables(config: ImageConfig, organizer: Mapping[str, str]) -> dict[str, str]:
    """The runs' variables: the image's ``ENV`` (but ``HOME``…), then the organizer's."""
    own = {
        key: value
        for key, value in config.env.items()
        if key not in KEPT_VARIABLES and not key.startswith("PROCTOR_")
    }
    return {**own, **organizer}
