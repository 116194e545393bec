"""The bundled environments, each built once per test session (a cache hit when already stored).

Every test shares one store (``Settings.from_env()``: ``PROCTOR_ENV_ROOT``), so a CI run builds
each environment at most once whichever test asks first."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_helpers import SLOT_BASE

from proctor.environments.oci import export_oci
from proctor.environments.store import BuiltEnvironment
from proctor.services.local.catalog import resolve_challenge
from proctor.services.local.environments import declared_environment, ensure_environment
from proctor.settings import Settings
from proctor.spec.environment import EnvironmentSpec


@pytest.fixture(scope="session")
def reference_spec() -> EnvironmentSpec:
    return declared_environment(resolve_challenge("physionet2018"), None)


@pytest.fixture(scope="session")
def reference_env(reference_spec: EnvironmentSpec) -> BuiltEnvironment:
    """The bundled challenges' environment in the default store (built on first use)."""
    return ensure_environment(reference_spec, Settings.from_env()).built


@pytest.fixture(scope="session")
def reference_exported(
    reference_env: BuiltEnvironment, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The reference environment as ``proctor env export`` writes it (an OCI archive)."""
    archive = tmp_path_factory.mktemp("oci") / "reference.tar"
    export_oci(reference_env, archive)
    return archive


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


@pytest.fixture(scope="session")
def physionet2026_env() -> BuiltEnvironment:
    """The bundled ``physionet2026`` environment (python-example-2026's libraries), built once."""
    return _bundled("physionet2026")


def bundled_by_name(name: str, folder: Path) -> BuiltEnvironment:
    """The bundled environment ``name`` (``environment: NAME``), built in the shared store.

    Named by the scorer of an imported EvalAI challenge, as organizers name it."""
    from evalai_challenge import make_evalai_challenge

    from proctor.resolve import load_challenge
    from proctor.services.local.bundle_import import import_challenge

    source = make_evalai_challenge(folder / "source")
    import_challenge(source, folder / "challenge", name)
    scorer = load_challenge(folder / "challenge").tasks[0].scoring_program
    assert scorer is not None and isinstance(scorer.environment, EnvironmentSpec)
    return ensure_environment(scorer.environment, Settings.from_env()).built


@pytest.fixture(scope="session")
def codabench_env(tmp_path_factory: pytest.TempPathFactory) -> BuiltEnvironment:
    """The bundled ``codabench`` environment (the py312 image's libraries), built once."""
    return bundled_by_name("codabench", tmp_path_factory.mktemp("codabench"))


@pytest.fixture(scope="session")
def codabench_legacy_env(tmp_path_factory: pytest.TempPathFactory) -> BuiltEnvironment:
    """The bundled ``codabench-legacy`` environment (the py37-era libraries), built once."""
    return bundled_by_name("codabench-legacy", tmp_path_factory.mktemp("codabench-legacy"))
