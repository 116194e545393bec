"""Use cases of declared environments: build on first use, lock, list, show, prune, export.

``job_environments`` gives each task of a phase the environment it runs in (building the ones
not in the store yet, with progress), so every stage mounts it as the sandbox root.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from proctor.environments.build import build_environment
from proctor.environments.digests import declaration_digest
from proctor.environments.lockfile import read_lock
from proctor.environments.store import BuiltEnvironment, EnvironmentStore
from proctor.environments.wheels import Target, lock_requirements
from proctor.errors import UsageError
from proctor.pipeline.report import EnvironmentInfo
from proctor.pipeline.task import JobEnvironment
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


def job_environment(spec: EnvironmentSpec, built: BuiltEnvironment) -> JobEnvironment:
    """What a job needs of a built environment: its root, variables and report identity."""
    info = EnvironmentInfo(
        name=built.manifest.name,
        digest=built.manifest.digest,
        declaration_digest=built.manifest.declaration_digest,
        matches_lock=matches_published_lock(spec, built),
    )
    root = RootFilesystem(built.rootfs, built.image if built.image.is_file() else None)
    return JobEnvironment(root, info, dict(spec.variables))


def job_environments(
    challenge: Challenge,
    phase: Phase,
    settings: Settings,
    listener: BuildListener | None = None,
) -> dict[str, JobEnvironment]:
    """Task name → its environment, for the tasks of ``phase`` not run on the host."""
    found: dict[str, JobEnvironment] = {}
    for task in phase.tasks:
        spec = challenge.environment_of(task)
        if spec is not None:
            found[task] = job_environment(spec, ensure_environment(spec, settings, listener).built)
    return found


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


def prune_environments(settings: Settings, keep: set[str]) -> list[Path]:
    """Remove build leftovers and the stored environments not in ``keep``.

    ``keep`` holds declaration digests; returns the folders removed.
    """
    store = store_of(settings)
    removed = store.remove_leftovers()
    for built in store.all():
        if built.manifest.declaration_digest not in keep:
            store.remove(built)
            removed.append(built.folder)
    return removed
