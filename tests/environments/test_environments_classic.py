"""The bundled classic-physionet declaration builds, and its tools run in the sandbox.

Built by ``make test-slow`` only (Octave, R, a JDK, GHC, ...: several minutes, a few GB)."""

from __future__ import annotations

import pytest
from paths import DATA

from proctor.sandbox.base import Limits, MiB, RunSpec
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.sandbox.rootfs import RootFilesystem
from proctor.services.local.catalog import resolve_challenge
from proctor.services.local.environments import declared_environment, ensure_environment
from proctor.settings import Settings

pytestmark = [pytest.mark.very_slow, pytest.mark.environment, pytest.mark.sandbox]
CLASSIC = DATA / "environments" / "classic-physionet"


@pytest.mark.timeout(1800)
def test_the_classic_physionet_tools_run_in_their_environment(env_settings: Settings) -> None:
    spec = declared_environment(resolve_challenge(str(CLASSIC)), None)
    built = ensure_environment(spec, Settings.from_env()).built
    assert {"octave", "r-base-core", "gfortran", "ghc", "libarmadillo-dev", "python3-numpy"} <= set(
        built.manifest.packages
    )
    script = (
        "octave --no-gui --eval 'pkg load signal; disp(1+1)' && "
        "Rscript -e 'cat(2+2, \"\\n\")' && java -version 2>&1 | head -1 && "
        "python3 -c 'import numpy; print(numpy.__version__)' && gfortran --version | head -1 && "
        "ghc --numeric-version"
    )
    sandbox = BwrapSandbox(env_settings)
    with sandbox.session(RootFilesystem(built.rootfs, built.image)) as session:
        outcome = session.run(
            RunSpec(
                ["/bin/sh", "-c", script],
                mounts=[],
                limits=Limits(wall_s=120, memory_bytes=2048 * MiB, processes=256),
            )
        )
    assert outcome.succeeded, outcome.stderr[-2000:]
    lines = outcome.stdout.split()
    assert "2" in lines and "4" in lines
