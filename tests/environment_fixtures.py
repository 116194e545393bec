"""The bundled environments, each built once per test session (a cache hit when already stored).

Every test shares one store (``Settings.from_env()``: ``PROCTOR_ENV_ROOT``), so a CI run builds
each environment at most once whichever test asks first."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.environments.store import BuiltEnvironment
from proctor.services.local.catalog import resolve_challenge
from proctor.services.local.environments import declared_environment, ensure_environment
from proctor.settings import Settings
from proctor.spec.environment import EnvironmentSpec
from sandbox_helpers import SLOT_BASE


@pytest.fixture(scope="session")
def reference_spec() -> EnvironmentSpec:
    return declared_environment(resolve_challenge("physionet2018"), None)


@pytest.fixture(scope="session")
def reference_env(reference_spec: EnvironmentSpec) -> BuiltEnvironment:
    """The bundled challenges' environment in the default store (built on first use)."""
    return ensure_environment(reference_spec, Settings.from_env()).built


@pytest.fixture
def env_settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "work", slot_uid_base=SLOT_BASE)


def _bundled(challenge: str) -> BuiltEnvironment:
    spec = declared_environment(resolve_challenge(challenge), None)
    return ensure_environment(spec, Settings.from_env()).built


@pytest.fixture(scope="session")
def autowsl_env() -> BuiltEnvironment:
    """The bundled ``autowsl`` environment (LightGBM 3, hyperopt 0.2.5, ...), built once."""
    return _bundled("autowsl")


@pytest.fixture(scope="session")
def physionet_env() -> BuiltEnvironment:
    """The bundled ``physionet`` environment (Octave with signal and statistics), built once."""
    return _bundled("physionet2017")
