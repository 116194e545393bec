"""An entry's ``Dockerfile`` built at prep into the image archive its job then runs in.

Host side first: the bases the challenge offers (``proctor/NAME`` for each declared environment
built, those the services layer passes in ``JobEnvironment.bases`` included, the environments
imported with ``proctor env import`` by their names, and the aliases of
``environment.entry_images.bases``), the final stage's
``FROM`` checked against them, and the wheels of the entry's ``requirements.txt`` resolved for
that base, as participant wheels are, where the environment allows them. Then
``pipeline.image_build`` builds the entry folder as the context in a sandbox session of its own
(no network; the build's limits). Images are kept in ``STORE/entry-builds`` by a key of the
context and the bases: tasks of one submission wait for one build (a lock) and share its image.

The built archive is imported into ``STORE/entry-images`` at once (``import_built``, under the
same lock) and then deleted: the build's folder keeps ``image.json``, ``build.log`` and
``imported.json``, which names the entry image by its digest. A resubmission of the same context
finds that image through it, and runs nothing; were the image gone (pruned alone), the build's
folder goes too and the context is built again.

The build log and a copy of the ``Dockerfile`` are kept in the run folder (``entry-image/``),
whether the build passed or failed; the log is also prep's diagnostics, disclosed as prep's
output is. See ``docs/environments.md`` ("Dockerfile entries").
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from proctor.environments.digests import declaration_digest
from proctor.environments.dockerfile import image_name
from proctor.environments.entry_images import EntryImage, ImageLimits, find_image, import_archive
from proctor.environments.entry_wheels import REQUIREMENTS
from proctor.environments.mounts import remove_tree
from proctor.environments.store import BuiltEnvironment, EnvironmentStore
from proctor.errors import ConfigError, EntryImageError, ImageBuildError, PlatformError
from proctor.pipeline.image_build import (
    DOCKERFILE,
    BaseImage,
    BuildLimits,
    BuildResult,
    StepSink,
    build_image,
    build_lock,
    entry_wheelhouse,
    environment_base,
    final_base,
    offered_bases,
)
from proctor.pipeline.job import JobEnvironment, TaskJob
from proctor.sandbox.base import Sandbox, SandboxSession
from proctor.spec.environment import EntryImages, ParticipantWheels
from proctor.spec.model import Challenge
from proctor.store.runfolder import ENTRY_BUILD_LOG, ENTRY_DOCKERFILE, ENTRY_IMAGE_FOLDER

BUILDS = "entry-builds"
"""The environment store's folder of builds (``KEY/image.json``, ``build.log``, ``imported.json``;
``KEY/image.tar`` only until it is imported)."""
IMPORTED = "imported.json"
"""A build's record of the entry image its archive became (``{"image": "sha256:…"}``)."""


@dataclass(frozen=True, slots=True)
class EntryBuild:
    """A built entry image: the imported image, its base (as the report names it), its log.

    ``digest``: the built archive's manifest digest (``image.digest`` is the config digest
    the store and the report know it by). ``cached``: the same context was built before on
    the same bases; nothing ran now.
    """

    image: EntryImage
    base: str
    digest: str
    log: str
    cached: bool

    def note(self) -> str:
        """A clause for prep's message: the image and how it came to be."""
        how = "reused from an earlier build of the same files" if self.cached else "built"
        return f"; image {self.digest[:19]} {how} from the Dockerfile on {self.base}"


def has_dockerfile(entry_root: Path) -> bool:
    """Whether the entry brings a ``Dockerfile`` at its root (a link counts: it is refused)."""
    path = entry_root / DOCKERFILE
    return path.is_file() or path.is_symlink()


def build_entry(job: TaskJob, sandbox: Sandbox, on_step: StepSink | None = None) -> EntryBuild:
    """Build ``job``'s entry ``Dockerfile``; its environment must allow entry images.

    ``on_step``: told of the build's steps as they start, then of the image (prep's progress).

    Raises ``ImageBuildError`` (the entry's failure, with ``log``) for a ``FROM`` not offered
    or a failed step, ``EntryRequirementsError`` for a refused ``requirements.txt``.
    """
    declared, allowed, store_root = _allowing(job.environment)
    environments = {**_declared(job.challenge, EnvironmentStore(store_root)), **declared.bases}
    bases = _bases(environments, allowed.bases, declared.imported)
    (job.folder.root / ENTRY_IMAGE_FOLDER).mkdir(parents=True, exist_ok=True)
    log_copy = job.folder.root / ENTRY_BUILD_LOG
    dockerfile = job.entry_root / DOCKERFILE
    if not dockerfile.is_symlink():  # a link is refused by the build itself
        _keep(job.folder.root / ENTRY_DOCKERFILE, dockerfile.read_bytes())
    store, limits = EnvironmentStore(store_root), ImageLimits.of(allowed)
    try:
        by_name = _base_environments([*environments.values(), *declared.imported.values()], bases)
        base = by_name[final_base(job.entry_root, list(bases))]
        wheelhouse = _wheelhouse(job, declared.participant_wheels, base)
        with sandbox.session() as session, job.cancel.listening(session.cancel):
            for _ in range(2):  # a second build only where the image was removed alone
                result = build_image(job.entry_root, bases, build_limits(allowed),
                                     store=store_root / BUILDS, session=session,
                                     work=_workspace(job), wheelhouse=wheelhouse,
                                     on_step=on_step)  # fmt: skip
                image = import_built(result, store, limits, session)
                if image is not None:
                    break
            else:
                raise PlatformError(f"the entry image built as {result.key} is not stored")
    except ImageBuildError as err:
        _keep(log_copy, (err.log or f"error: {err}\n").encode())
        raise _explained(err, job.entry_root, declared.participant_wheels) from None
    log = result.log.read_text(encoding="utf-8", errors="replace")
    _keep(log_copy, log.encode())
    return EntryBuild(image, result.base, result.digest, log, result.cached)


def import_built(
    result: BuildResult,
    store: EnvironmentStore,
    limits: ImageLimits,
    session: SandboxSession | None = None,
) -> EntryImage | None:
    """The entry image of a build: imported from its archive, which is then deleted.

    A build imported before names its image in ``imported.json``; the image is found by that
    digest (nothing is read again). None when neither the image nor the archive is left (the
    image was removed without its build): the build's folder is removed, so building the
    context again starts afresh. Runs under the build's lock (``session``: its cancel).
    """
    folder = result.archive.parent
    with build_lock(folder.parent, result.key, session):
        known = _imported(folder)
        image = find_image(store, known) if known is not None else None
        if image is not None and (image.image.is_file() or image.rootfs.is_dir()):
            return image
        if not result.archive.is_file():
            remove_tree(folder)
            return None
        image = import_archive(result.archive, store, limits, base=result.base)
        _keep(folder / IMPORTED, json.dumps({"image": image.digest}).encode())
        result.archive.unlink()  # the image holds all of it: its record and its packed tree
        return image


def _imported(folder: Path) -> str | None:
    """The digest of the entry image a build was imported as, if it was."""
    try:
        return str(json.loads((folder / IMPORTED).read_text())["image"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def build_limits(allowed: EntryImages) -> BuildLimits:
    """The build's caps as the challenge's ``entry_images.build`` sets them."""
    spec = allowed.build
    return BuildLimits(wall_s=spec.wall_s, memory_bytes=spec.memory_bytes,
                       disk_bytes=spec.disk_bytes)  # fmt: skip


def _allowing(environment: JobEnvironment | None) -> tuple[JobEnvironment, EntryImages, Path]:
    """The job's environment, its ``entry_images`` and its store; refused where not allowed."""
    allowed = environment.entry_images if environment is not None else None
    if environment is None or allowed is None or not allowed.allow:
        raise EntryImageError(
            f"this challenge does not build entries' {DOCKERFILE}s: remove the {DOCKERFILE} "
            "and use the libraries its environment declares (see the kit)"
        )
    if environment.store_root is None:
        raise PlatformError("entry images are allowed but the job names no environment store")
    return environment, allowed, environment.store_root


def _declared(challenge: Challenge, store: EnvironmentStore) -> dict[str, BuiltEnvironment]:
    """The challenge's declared environments already built in ``store``, by name."""
    found: dict[str, BuiltEnvironment] = {}
    for name, spec in challenge.declared_environments().items():
        built = store.find(declaration_digest(spec))
        if built is not None:
            found[name] = built
    return found


def imported_base(name: str, built: BuiltEnvironment) -> BaseImage:
    """An environment imported with ``proctor env import`` as a base named ``name``."""
    base = environment_base(built, name)
    return BaseImage(base.root, base.digest, base.env, f"{name} (imported)")


def _bases(
    environments: Mapping[str, BuiltEnvironment],
    aliases: Mapping[str, str],
    imported: Mapping[str, BuiltEnvironment],
) -> dict[str, BaseImage]:
    offered = {name: imported_base(name, built) for name, built in imported.items()}
    try:
        return offered_bases(environments, aliases, offered)
    except ConfigError as err:  # the organizer's alias, unchecked at load: not the entry's fault
        raise PlatformError(str(err)) from None


def _base_environments(
    environments: Iterable[BuiltEnvironment], bases: Mapping[str, BaseImage]
) -> dict[str, BuiltEnvironment]:
    """Each offered base's environment, by canonical image name (for resolving wheels)."""
    by_root = {built.rootfs: built for built in environments}
    return {image_name(name): by_root[base.root] for name, base in bases.items()}


def _wheelhouse(
    job: TaskJob, wheels: ParticipantWheels | None, base: BuiltEnvironment
) -> Path | None:
    """The entry's wheels, fetched by the host for ``base``; None where none are offered."""
    if wheels is None or not wheels.allow:
        return None  # pip in a RUN finds only what the base holds
    folder = job.folder.root / ENTRY_IMAGE_FOLDER / f"wheels-{job.task}"
    return entry_wheelhouse(job.entry_root, base, wheels, folder)


def _workspace(job: TaskJob) -> Path:
    """A new folder beside the homes (traversable by the slot) for the build's tmpfs."""
    return job.folder.home(job.task).with_name(f"{job.task}.image-build")


def _keep(path: Path, data: bytes) -> None:
    """Write ``path`` whole at once: the tasks of one submission share the run folder."""
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(handle, "wb") as sink:
        sink.write(data)
    Path(name).chmod(0o644)
    os.replace(name, path)


def _explained(
    err: ImageBuildError, entry_root: Path, wheels: ParticipantWheels | None
) -> ImageBuildError:
    """``err``, saying why pip found nothing where no wheels reach the build."""
    offered = wheels is not None and wheels.allow
    if offered or not (entry_root / REQUIREMENTS).is_file() or "pip" not in err.log:
        return err
    hint = (
        f"; this challenge offers no wheels for {REQUIREMENTS}: the build has no network, so "
        f"{REQUIREMENTS} may list only packages the base already holds (see the kit)"
    )
    return ImageBuildError(f"{err}{hint}", log=err.log)
