"""Use cases of declared environments: build on first use, lock, list, show, prune, export.

``job_environments`` gives each task of a phase the environment it runs in (building the ones
not in the store yet, with progress), so every stage mounts it as the sandbox root.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from proctor.environments.build import build_environment
from proctor.environments.digests import declaration_digest
from proctor.environments.entry_images import list_images, remove_image
from proctor.environments.lockfile import read_lock
from proctor.environments.mounts import remove_tree
from proctor.environments.oci import export_oci, import_oci
from proctor.environments.store import IMPORTED, BuiltEnvironment, EnvironmentStore
from proctor.environments.wheels import Target, lock_requirements
from proctor.errors import UsageError
from proctor.pipeline.entry_build import BUILDS
from proctor.pipeline.image_build import stored_builds
from proctor.pipeline.inputs import stage_inputs
from proctor.pipeline.program_runs import SandboxProgramRunner
from proctor.pipeline.report import EnvironmentInfo
from proctor.pipeline.task import JobEnvironment, scorer_environment_key
from proctor.protocols.registry import driver_for
from proctor.sandbox import create_sandbox
from proctor.sandbox.base import Limits, Mount, RunSpec
from proctor.sandbox.rootfs import RootFilesystem
from proctor.settings import Settings
from proctor.spec import Challenge, Phase
from proctor.spec.environment import EnvironmentSpec


class BuildListener(Protocol):
    """Told how an environment build goes (a face shows it as a progress display)."""

    def build_started(self, name: str) -> None:
        """A build of environment ``name`` begins (a cache miss)."""

    def build_step(self, name: str, step: str) -> None:
        """The build entered ``step`` (debian, wheels, files, pack, digest, commit)."""

    def build_finished(self, name: str, seconds: float) -> None:
        """The build ended and the environment is in the store."""


class SilentBuild:
    """A build listener that ignores every event."""

    def build_started(self, name: str) -> None:
        """Ignore."""

    def build_step(self, name: str, step: str) -> None:
        """Ignore."""

    def build_finished(self, name: str, seconds: float) -> None:
        """Ignore."""


@dataclass(frozen=True, slots=True)
class EnsuredEnvironment:
    """An environment in the store and whether this call built it."""

    built: BuiltEnvironment
    fresh: bool
    seconds: float


def store_of(settings: Settings) -> EnvironmentStore:
    """The environment store these settings name."""
    return EnvironmentStore(settings.environments)


def ensure_environment(
    spec: EnvironmentSpec, settings: Settings, listener: BuildListener | None = None
) -> EnsuredEnvironment:
    """The built environment of ``spec``, building it now when the store lacks it."""
    events = listener or SilentBuild()
    store = store_of(settings)
    started = time.monotonic()
    found = store.find(declaration_digest(spec))
    if found is not None:
        return EnsuredEnvironment(found, False, time.monotonic() - started)
    events.build_started(spec.name)
    built, fresh = build_environment(
        spec, store, is_root=settings.is_root, step=lambda s: events.build_step(spec.name, s)
    )
    seconds = time.monotonic() - started
    events.build_finished(spec.name, seconds)
    return EnsuredEnvironment(built, fresh, seconds)


def matches_published_lock(spec: EnvironmentSpec, built: BuiltEnvironment) -> bool | None:
    """Whether ``built`` is exactly the challenge's published lock (None: none published)."""
    if spec.lock is None or not spec.lock.is_file():
        return None
    published, mine = read_lock(spec.lock), read_lock(built.lock)
    return not published.differences(mine)


def job_environment(
    spec: EnvironmentSpec, built: BuiltEnvironment, offered: OfferedBases | None = None
) -> JobEnvironment:
    """What a job needs of a built environment: its root, variables and report identity.

    ``offered``: the bases an entry's ``Dockerfile`` may build on, where entry images are
    allowed (:func:`entry_image_bases`).
    """
    info = EnvironmentInfo(
        name=built.manifest.name,
        digest=built.manifest.digest,
        declaration_digest=built.manifest.declaration_digest,
        matches_lock=matches_published_lock(spec, built),
    )
    root = RootFilesystem(built.rootfs, built.image if built.image.is_file() else None)
    return JobEnvironment(
        root,
        info,
        dict(spec.variables),
        suite=spec.debian.suite,
        wheels=dict(built.manifest.wheels),
        participant_wheels=spec.participant_wheels,
        entry_images=spec.entry_images,
        store_root=built.folder.parent,
        bases=offered.declared if offered is not None else {},
        imported=offered.imported if offered is not None else {},
    )


@dataclass(frozen=True, slots=True)
class OfferedBases:
    """The environments a ``FROM`` of a challenge's entries' Dockerfiles may name.

    ``declared``: its declared environments, by name; ``imported``: the environments the
    organizer imported into the store (``proctor env import``), by the name they came with.
    """

    declared: dict[str, BuiltEnvironment]
    imported: dict[str, BuiltEnvironment]


def entry_image_bases(
    challenge: Challenge, settings: Settings, listener: BuildListener | None = None
) -> OfferedBases:
    """The bases of ``challenge``'s entry images: an aliased environment is built now if needed.

    Other declared environments are offered (as ``proctor/NAME``) once built.
    """
    store = store_of(settings)
    aliased = {
        name
        for spec in challenge.declared_environments().values()
        for name in spec.entry_images.bases.values()
    }
    declared: dict[str, BuiltEnvironment] = {}
    for name, spec in challenge.declared_environments().items():
        if name in aliased:
            declared[name] = ensure_environment(spec, settings, listener).built
        elif (found := store.find(declaration_digest(spec))) is not None:
            declared[name] = found
    imported = {b.manifest.name: b for b in store.all() if b.manifest.source == IMPORTED}
    return OfferedBases(declared, imported)


def job_environments(
    challenge: Challenge,
    phase: Phase,
    settings: Settings,
    listener: BuildListener | None = None,
) -> dict[str, JobEnvironment]:
    """Task name → its environment, for the tasks of ``phase`` not run on the host.

    A task scored by a program also has its scorer's environment, under
    ``scorer_environment_key(task)``.
    """
    found: dict[str, JobEnvironment] = {}
    offered: OfferedBases | None = None
    for task in phase.tasks:
        spec = challenge.environment_of(task)
        if spec is not None:
            built = ensure_environment(spec, settings, listener).built
            if spec.entry_images.allow and offered is None:
                offered = entry_image_bases(challenge, settings, listener)
            bases = offered if spec.entry_images.allow else None
            found[task] = job_environment(spec, built, bases)
        scorer_spec = challenge.scorer_environment_of(task)
        if scorer_spec is not None:
            built = ensure_environment(scorer_spec, settings, listener).built
            found[scorer_environment_key(task)] = job_environment(scorer_spec, built)
    return found


def scoring_program_runner(
    challenge: Challenge, task: str, settings: Settings, scratch: Path
) -> SandboxProgramRunner | None:
    """What runs ``task``'s scoring program outside a job (a rescore); None for a built-in one.

    The program's environment is built first when the store lacks it.
    """
    if challenge.task(task).scoring_program is None:
        return None
    spec = challenge.scorer_environment_of(task)
    environment = job_environment(spec, ensure_environment(spec, settings).built) if spec else None
    return SandboxProgramRunner(
        create_sandbox(settings),
        scratch,
        root=environment.root if environment is not None else None,
        variables=environment.variables if environment is not None else None,
    )


def tasks_on_host(challenge: Challenge, tasks: Iterable[str]) -> list[str]:
    """The ``tasks`` whose entries' code would see the host's ``/usr`` (``environment: host``).

    A protocol where no entry code runs (``predictions``) has none, unless the task's scorer
    runs it (a concurrent ingestion, in the scoring program's environment): a scoring program
    alone, the organizer's, runs in the sandbox in its declared environment (or the host's).
    """
    runs_code = driver_for(challenge.protocol.kind).runs_code
    return [task for task in tasks if _code_on_host(challenge, task, runs_code=runs_code)]


def _code_on_host(challenge: Challenge, task: str, *, runs_code: bool) -> bool:
    """True when the entry's code runs in ``task`` on the host's ``/usr``."""
    program = challenge.task(task).scoring_program
    if runs_code and challenge.environment_of(task) is None:
        return True
    beside = program is not None and program.runs_entry_code
    return beside and challenge.scorer_environment_of(task) is None


def declared_environment(challenge: Challenge, task: str | None) -> EnvironmentSpec:
    """The environment ``challenge`` (or its ``task``) declares; a UsageError for ``host``."""
    if task is not None and task not in {t.name for t in challenge.tasks}:
        known = ", ".join(t.name for t in challenge.tasks)
        raise UsageError(f"challenge {challenge.name!r} has no task {task!r} (tasks: {known})")
    spec = challenge.environment_of(task or challenge.tasks[0].name)
    if spec is None:
        where = f"task {task!r}" if task else f"challenge {challenge.name!r}"
        raise UsageError(
            f"{where} runs on the host ('environment: host'): declare an environment in "
            "challenge.yaml to build one"
        )
    return spec


def lock_environment(spec: EnvironmentSpec) -> list[str]:
    """Resolve the declaration's ``requirements.in`` into its wheel lock; returns the pins."""
    if spec.python is None:
        raise UsageError(f"environment {spec.name!r} declares no python requirements to lock")
    target = Target.for_suite(spec.debian.suite)
    return lock_requirements(spec.python.requirements, spec.python.lock, target)


def list_environments(settings: Settings) -> list[BuiltEnvironment]:
    """Every environment in the store."""
    return store_of(settings).all()


def prune_environments(settings: Settings, keep: set[str], *, dry_run: bool = False) -> list[Path]:
    """Remove build leftovers, entry images and the stored environments not in ``keep``.

    ``keep`` holds declaration digests; returns the paths removed (with ``dry_run``: the paths
    that would be, nothing removed). Entry images, and the images built from entries'
    Dockerfiles (``entry-builds``, but a build under way), go too: an entry evaluated again
    has its image imported, or built, again.
    """
    store = store_of(settings)
    doomed = [*store.leftovers()]
    unkept = [b for b in store.all() if b.manifest.declaration_digest not in keep]
    images = list_images(store)
    builds = stored_builds(store.root / BUILDS)
    if dry_run:
        return [*doomed, *(b.folder for b in unkept), *(i.folder for i in images), *builds]
    removed = store.remove_leftovers()
    for built in unkept:
        store.remove(built)
        removed.append(built.folder)
    for image in images:
        remove_image(image)
        removed.append(image.folder)
    for path in builds:
        if path.is_dir() and not path.is_symlink():
            remove_tree(path)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def export_environment(
    spec: EnvironmentSpec, archive: Path, settings: Settings, listener: BuildListener | None = None
) -> tuple[BuiltEnvironment, str]:
    """Write ``spec``'s environment (built first if needed) as an OCI image archive."""
    built = ensure_environment(spec, settings, listener).built
    if archive.is_dir():
        raise UsageError(f"{archive} is a folder: name the .tar file to write")
    if not archive.parent.is_dir():
        raise UsageError(f"{archive.parent} does not exist: create it first")
    return built, export_oci(built, archive)


def import_environment(
    archive: Path, settings: Settings, *, expect: str | None = None
) -> BuiltEnvironment:
    """Load a published OCI image archive into the store, checking its digests."""
    return import_oci(archive, store_of(settings), expect=expect)


SHELL_LIMITS = Limits(wall_s=8 * 3600.0, memory_bytes=4 * 1024**3, processes=256)
"""Limits of an interactive shell (a person at the keyboard, not an entry under test)."""


def open_shell(
    challenge: Challenge,
    task: str | None,
    settings: Settings,
    entry: Path | None,
    listener: BuildListener | None = None,
) -> int:
    """An interactive shell in the sandbox with the environment as root; its exit status.

    The entry (a copy, so nothing of the original changes) is the home at ``/entry``, the
    task's public inputs are at ``/data``, as in the quiz.
    """
    spec = declared_environment(challenge, task)
    environment = job_environment(spec, ensure_environment(spec, settings, listener).built)
    chosen = challenge.task(task or challenge.tasks[0].name)
    sandbox = create_sandbox(settings)
    with tempfile.TemporaryDirectory(prefix="proctor-shell-", dir=_shell_parent(settings)) as tmp:
        Path(tmp).chmod(0o755)  # the slot uid traverses it to reach the home
        home = Path(tmp) / "entry"
        with (
            sandbox.session(environment.root) as session,
            session.workspace(home, size_bytes=challenge.limits.home_bytes),
        ):
            if entry is not None:
                shutil.copytree(entry, home, symlinks=True, dirs_exist_ok=True)
            session.give(home)
            data = stage_inputs(chosen.public_inputs, Path(tmp) / "data")  # never the install
            mounts = [Mount(home, "/entry", writable=True), Mount(data, "/data")]
            variables = {**environment.variables, "PROCTOR_DATA": "/data", "HOME": "/entry"}
            bash = (environment.root.tree / "usr/bin/bash").exists()
            shell = ["/bin/bash", "-i"] if bash else ["/bin/sh", "-i"]
            outcome = session.run_interactive(
                RunSpec(shell, mounts=mounts, limits=SHELL_LIMITS, env=variables, cwd="/entry")
            )
    return outcome.exit_status if outcome.exit_status is not None else 128 + (outcome.signal or 0)


def _shell_parent(settings: Settings) -> Path:
    settings.work_root.mkdir(parents=True, exist_ok=True)
    return settings.work_root


def declared_digests(challenges: list[Challenge]) -> set[str]:
    """The declaration digests of every environment these challenges (and tasks) declare."""
    found = set()
    for challenge in challenges:
        for task in challenge.tasks:
            spec = challenge.environment_of(task.name)
            if spec is not None:
                found.add(declaration_digest(spec))
    return found
