"""An entry that brings its own root filesystem: ``image.tar`` or ``image.tar.gz`` at its root.

Before prep, host side: where the task's environment allows entry images
(``environment.entry_images.allow``), the archive is taken out of the entry (the rest of the
upload is the entry as the protocol mounts it), imported into the environment store by digest
(``environments.entry_images``) and becomes the job's environment: every stage of that entry
runs with the image's tree as its read-only root, in the same sandbox as a declared
environment. An entry with a ``Dockerfile`` at its root (and no archive) has it built first
(``pipeline.entry_build``) into such an archive, imported the same way. Where images are not
allowed, an entry bringing one is refused (a ``Dockerfile`` too, unless the protocol's entries
always ship one, as PhysioNet's do: it is then left unbuilt and prep says so). Any refusal is
the entry's failure at prep.

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
from dataclasses import dataclass
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
from proctor.pipeline.entry_build import build_entry, has_dockerfile
from proctor.pipeline.image_build import DOCKERFILE, StepSink
from proctor.pipeline.job import JobEnvironment, TaskJob
from proctor.pipeline.report import ENTRY_IMAGE, EnvironmentInfo
from proctor.protocols.registry import driver_for
from proctor.sandbox.base import Sandbox
from proctor.sandbox.rootfs import RootFilesystem
from proctor.spec.environment import EntryImages
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


@dataclass(frozen=True, slots=True)
class ImageUse:
    """What an entry's own image makes of its job: the job to run, and what prep tells.

    ``image``: the image it runs in (None: the declared environment); ``note``: a clause for
    prep's message; ``logs``: (name, text) pairs shown with prep's (the build log).
    """

    job: TaskJob
    image: EntryImage | None = None
    note: str = ""
    logs: tuple[tuple[str, str], ...] = ()


IGNORED_DOCKERFILE = (
    "; the Dockerfile is not built: this challenge runs every entry in its declared "
    "environment, which stands for the Dockerfile's base (see the kit)"
)


def with_entry_image(job: TaskJob, sandbox: Sandbox, on_step: StepSink | None = None) -> ImageUse:
    """``job`` running in its entry's own image, when the entry brings one.

    An image archive is imported; a ``Dockerfile`` (without an archive) is built first in a
    session of ``sandbox`` (``pipeline.entry_build``). Where the environment allows no entry
    images, a ``Dockerfile`` is refused, unless the protocol's entries always ship one (it is
    then left unbuilt, and prep says so). Raises ``EntryImageError`` when the image is not
    allowed or cannot be used, ``ImageBuildError`` when it cannot be built. ``on_step`` is
    told of the build's steps as they start (``image_build.StepSink``).
    """
    archive = take_archive(job.entry_root, job.folder.root)
    if archive is not None:
        declared, allowed, store = _allowing(job, archive.name)
        image = import_archive(archive, store, ImageLimits.of(allowed))
        return ImageUse(_running_in(job, image, declared), image)
    if not has_dockerfile(job.entry_root):
        return ImageUse(job)
    asked = job.environment.entry_images if job.environment is not None else None
    shipped = driver_for(job.challenge.protocol.kind).ships_dockerfile
    if shipped and (asked is None or not asked.allow):
        return ImageUse(job, note=IGNORED_DOCKERFILE)
    built = build_entry(job, sandbox, on_step)  # refuses it where images are not allowed
    declared, _, _ = _allowing(job, DOCKERFILE)
    logs = (("build log", built.log),)
    return ImageUse(_running_in(job, built.image, declared), built.image, built.note(), logs)


def _allowing(job: TaskJob, what: str) -> tuple[JobEnvironment, EntryImages, EnvironmentStore]:
    """The job's environment, its ``entry_images`` and store; ``what`` refused where not allowed."""
    declared = job.environment
    allowed = declared.entry_images if declared is not None else None
    if declared is None or allowed is None or not allowed.allow or declared.store_root is None:
        raise EntryImageError(
            f"this challenge does not run entries in their own image: remove {what} "
            "and use the libraries its environment declares (see the kit)"
        )
    return declared, allowed, EnvironmentStore(declared.store_root)


def _running_in(job: TaskJob, image: EntryImage, declared: JobEnvironment) -> TaskJob:
    """``job`` in ``image``, its record kept in the run folder."""
    record = job.folder.root / RECORD
    record.write_text(json.dumps(image.to_json(), indent=2, sort_keys=True) + "\n")
    return dataclasses.replace(job, environment=image_environment(image, declared))


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
