"""Build the environments a set of challenges declares, several at once, before running them.

A first ``make demo`` on a fresh machine spends most of its time building environments
(downloading and unpacking Debian packages and wheels, packing the image). Built one after the
other on first use, their downloads and their CPU-bound steps never overlap; built at once,
each in a process of its own (the store tells builders apart by process id), they do. A build
that fails here is left to the first use, which builds it again and reports why.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from proctor.environments.digests import declaration_digest
from proctor.services.local.environments import ensure_environment, store_of
from proctor.settings import Settings
from proctor.spec import Challenge
from proctor.spec.environment import EnvironmentSpec

MAX_PARALLEL_BUILDS = 3


@dataclass(frozen=True, slots=True)
class PrebuildPlan:
    """The distinct environments some challenges declare that the store lacks."""

    specs: tuple[EnvironmentSpec, ...]

    @property
    def names(self) -> list[str]:
        """The environments' names, in build order."""
        return [spec.name for spec in self.specs]

    @property
    def worth_it(self) -> bool:
        """Two builds or more overlap; one is left to its first use (with its progress)."""
        return len(self.specs) >= 2


def prebuild_plan(challenges: list[Challenge], settings: Settings) -> PrebuildPlan:
    """What building these challenges' environments ahead would build."""
    store = store_of(settings)
    missing: dict[str, EnvironmentSpec] = {}
    for challenge in challenges:
        for task in challenge.tasks:
            spec = challenge.environment_of(task.name)
            if spec is None:
                continue
            digest = declaration_digest(spec)
            if digest not in missing and store.find(digest) is None:
                missing[digest] = spec
    return PrebuildPlan(tuple(missing.values()))


def prebuild_environments(plan: PrebuildPlan, settings: Settings) -> list[tuple[str, float | None]]:
    """Build the plan's environments at once, one process each: (name, seconds or None)."""
    if not plan.worth_it:
        return []
    context = multiprocessing.get_context("fork")
    workers = min(MAX_PARALLEL_BUILDS, len(plan.specs))
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return list(pool.map(_build, plan.specs, [settings] * len(plan.specs)))


def _build(spec: EnvironmentSpec, settings: Settings) -> tuple[str, float | None]:
    """Build one environment in this worker process; None as the time when it failed."""
    try:
        return spec.name, ensure_environment(spec, settings).seconds
    except Exception:  # the first use builds it again, and reports why it fails
        return spec.name, None
