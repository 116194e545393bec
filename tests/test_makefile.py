"""``make demo`` as a newcomer starts it: says what the long install is, and shows pip's bar.

``make -n -B`` prints the commands the targets would run without running any.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from paths import REPO


def _planned(target: str) -> list[str]:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(["make", "-n", "-B", target], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=True)  # fmt: skip
    return done.stdout.splitlines()


@pytest.mark.parametrize("target", ["demo", "test"])
def test_the_install_says_what_it_does_and_shows_pips_progress(target: str) -> None:
    lines = _planned(target)
    installs = [line for line in lines if "pip install" in line and "-e " in line]
    assert len(installs) == 1, lines
    assert "--progress-bar on" in installs[0] and "--quiet" not in installs[0], installs[0]
    before = lines[: lines.index(installs[0])]
    assert any(line.startswith("echo") and "installing Proctor" in line for line in before)
