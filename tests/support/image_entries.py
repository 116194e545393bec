"""A toy submission that runs in its own image, on a seeded platform (``service_seed``).

The toy challenge is installed again declaring the reference environment with entry images
allowed; the entry brings ``image.tar``, a slim image cut from that environment
(``image_craft.slim_image``: a shell, ``cut``, libc, and the environment's package lists), so
the run is real and the archive a few megabytes. ``keep_build_files`` adds what a run of a
``Dockerfile`` entry keeps (``entry-image/Dockerfile`` and ``build.log``) to a job's run
artifact, as the build at prep writes them into the run folder.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from image_craft import docker_archive, slim_image
from reference_environment import declare_reference_environment
from service_seed import Seeded, submit
from sqlalchemy import select
from toy_challenge import make_challenge, make_entry

from proctor.environments.store import BuiltEnvironment
from proctor.services.platform import installs
from proctor.services.platform.accounts import authenticate
from proctor.store.models import Job, Result
from proctor.store.runfolder import ENTRY_BUILD_LOG, ENTRY_DOCKERFILE

DOCKERFILE = "FROM proctor/proctor-reference\nCOPY . /toy\n"
BUILD_LOG = "STEP 1/2: FROM proctor/proctor-reference\nSTEP 2/2: COPY . /toy\nbuilt\n"


def install_image_toy(seeded: Seeded, root: Path) -> None:
    """Install the toy challenge again, in the reference environment, entry images allowed."""
    bundle = declare_reference_environment(make_challenge(root / "toy"),
                                           entry_images={"allow": True})  # fmt: skip
    installs.install(seeded.platform, authenticate(seeded.platform, seeded.tokens["olga"]),
                     str(bundle))  # fmt: skip


def submit_in_image(seeded: Seeded, user: str, root: Path, built: BuiltEnvironment) -> str:
    """Submit the good toy entry with ``image.tar`` (a slim cut of ``built``) as ``user``."""
    entry = make_entry(root / "entry")
    docker_archive(slim_image(built), entry / "image.tar")
    return submit(seeded, user, entry)


def keep_build_files(seeded: Seeded, sid: str) -> None:
    """Add the ``Dockerfile`` and build log to each job's run artifact of ``sid``."""
    platform = seeded.platform
    with platform.db.begin() as session:
        rows = session.scalars(
            select(Result).join(Job, Job.id == Result.job_id).where(Job.submission_id == sid)
        ).all()
        for result in rows:
            assert result.run_artifact is not None
            result.run_artifact = _with_files(seeded, result.run_artifact)


def _with_files(seeded: Seeded, artifact: str) -> str:
    """A new artifact: ``artifact``'s members with the build's files first (as ``_run_logs``
    writes the organizer's files before the outputs)."""
    artifacts = seeded.platform.artifacts
    out = io.BytesIO()
    with (
        tarfile.open(artifacts.path(artifact), "r:gz") as old,
        tarfile.open(fileobj=out, mode="w:gz") as new,
    ):
        for name, text in ((ENTRY_DOCKERFILE, DOCKERFILE), (ENTRY_BUILD_LOG, BUILD_LOG)):
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            new.addfile(info, io.BytesIO(text.encode()))
        for member in old:
            new.addfile(member, old.extractfile(member) if member.isfile() else None)
    out.seek(0)
    return artifacts.put_stream(out)
