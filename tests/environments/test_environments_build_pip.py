"""The pip a build offers where its base has none: the host's bundled wheel, run in place."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from proctor.environments.build_pip import MOUNT, WHEEL, host_pip_wheel, write_pip_tools


@pytest.fixture
def wheel() -> Path:
    found = host_pip_wheel()
    assert found is not None, "the test host's Python bundles a pip wheel (ensurepip)"
    return found


def test_the_tools_run_the_host_s_pip_wheel_in_place(wheel: Path, tmp_path: Path) -> None:
    tools = write_pip_tools(wheel, tmp_path / "pip")
    assert (tools / WHEEL).read_bytes() == wheel.read_bytes()
    for name in ("pip", "pip3"):
        shim = tools / "bin" / name
        assert shim.stat().st_mode & 0o777 == 0o755
        assert f"python3 {MOUNT}/{WHEEL}/pip" in shim.read_text()
    done = subprocess.run(
        [sys.executable, str(tools / WHEEL / "pip"), "--version"],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.startswith("pip "), done.stderr
    version = wheel.name.split("-")[1]
    assert f"pip {version} " in done.stdout
