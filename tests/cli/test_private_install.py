"""Proctor installed where sandbox uids cannot enter (``/root``, a 0700 home, ``mktemp -d``).

The package is copied under a 0700 folder and run from there as ``proctor run`` would be:
nothing a sandbox needs may be mounted from the install path, and a platform fault's reason is
printed on the organizer's own terminal.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from autowsl_toy import GOOD_MODEL, make_challenge, make_entry

import proctor

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

CLI = "import sys; from proctor.cli.main import main; sys.argv[0] = 'proctor'; main()"


@pytest.fixture
def private_install(tmp_path: Path) -> Path:
    """A copy of the package in a folder only root may enter; its ``src`` folder."""
    private = tmp_path / "home"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    src = private / "checkout" / "src"
    shutil.copytree(Path(proctor.__file__).parent, src / "proctor",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    return src


def proctor_from(src: Path, *args: str, work: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src), "PROCTOR_WORK_ROOT": str(work)}
    return subprocess.run([sys.executable, "-c", CLI, *args], env=env, capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip


def test_a_python_model_entry_runs_from_an_install_other_users_cannot_enter(
    private_install: Path, shared_dir: Path
) -> None:
    assert (private_install / "proctor" / "protocols" / "harness" / "model_harness.py").is_file()
    challenge = make_challenge(shared_dir / "challenge")
    entry = make_entry(shared_dir / "entry", GOOD_MODEL)
    done = proctor_from(private_install, "run", str(entry), "-c", str(challenge), "--json",
                        work=shared_dir / "work")  # fmt: skip
    report = json.loads(done.stdout)
    assert report["status"] == "scored", (report["message"], done.stderr[-2000:])
    assert done.returncode == 0


def test_a_platform_fault_of_a_local_run_is_explained_on_the_organizers_terminal(
    private_install: Path, shared_dir: Path
) -> None:
    challenge = make_challenge(shared_dir / "challenge")
    practice = challenge / "public" / "practice"
    (practice / "train.data").unlink()  # the organizer's dataset, not the entry, is broken
    entry = make_entry(shared_dir / "entry", GOOD_MODEL)
    done = proctor_from(private_install, "run", str(entry), "-c", str(challenge), "--json",
                        work=shared_dir / "work")  # fmt: skip
    report = json.loads(done.stdout)
    assert report["failure"] == "platform" and done.returncode == 3
    assert "load a dataset" not in done.stdout  # the report stays a participant's
    assert "platform fault (E-PLATFORM), task a (quiz): the harness could not load a dataset" in (
        done.stderr
    )
