"""``challenge check`` runs the challenge's own samples once (issue 27), in the real sandbox.

A sample that makes the scoring program crash means the challenge is not ready, naming the
organizer's program; ``--no-run`` skips the samples; a sample whose own code fails is named
as the sample's; and a good challenge is ready after its samples ran.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from program_challenge import SCORE_PY, make_challenge, make_entry

from proctor.services.local.authoring import check_challenge
from proctor.settings import Settings

PROCTOR = Path(sys.executable).parent / "proctor"
CRASHES = SCORE_PY + "raise RuntimeError('SCORER-BUG-7')\n"


class Heard:
    """A check listener keeping which samples ran."""

    def __init__(self) -> None:
        self.samples: list[tuple[str, int, int]] = []

    def note(self, text: str) -> None:
        """Notes are not what these tests look at."""

    def build_started(self, name: str) -> None:
        """Builds are not what these tests look at."""

    def build_step(self, name: str, step: str) -> None:
        """Builds are not what these tests look at."""

    def build_finished(self, name: str, seconds: float) -> None:
        """Builds are not what these tests look at."""

    def sample_started(self, name: str, index: int, total: int) -> None:
        self.samples.append((name, index, total))


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "work")


def _challenge(shared_dir: Path, score_py: str = SCORE_PY) -> Path:
    root = make_challenge(shared_dir / "challenge", score_py=score_py)
    make_entry(root / "baseline")
    return root


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_sample_that_crashes_the_scoring_program_is_not_ready(
    shared_dir: Path, settings: Settings
) -> None:
    root = _challenge(shared_dir, CRASHES)
    heard = Heard()
    problems = check_challenge(root, settings, run=True, listener=heard)
    assert heard.samples == [("baseline", 1, 1)]
    assert [p.location for p in problems] == ["baseline"], problems
    message = problems[0].message
    assert message.startswith("the organizer's program (scoring or ingestion) failed")
    assert "SCORER-BUG-7" in message
    assert not list((settings.work_root).glob("*/score-error.txt"))  # run folders removed


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_sample_whose_own_code_fails_is_named_as_the_samples(
    shared_dir: Path, settings: Settings
) -> None:
    root = _challenge(shared_dir)
    (root / "baseline" / "next.sh").write_text("#!/bin/sh\nexit 3\n")
    problems = check_challenge(root, settings, run=True)
    assert [p.location for p in problems] == ["baseline"], problems
    assert "the sample's own code failed" in problems[0].message


@pytest.mark.sandbox
@pytest.mark.slow
def test_check_runs_the_samples_unless_no_run(shared_dir: Path) -> None:
    good = _challenge(shared_dir)
    env = {**os.environ, "PROCTOR_WORK_ROOT": str(shared_dir / "work")}

    def check(*more: str) -> subprocess.CompletedProcess[str]:
        argv = [str(PROCTOR), "challenge", "check", str(good), *more]
        return subprocess.run(argv, capture_output=True, text=True, env=env, check=False)

    done = check()
    assert done.returncode == 0, done.stderr
    assert "running sample 1/1: baseline" in done.stderr and "ready" in done.stdout
    (good / "scoring" / "score.py").write_text(CRASHES)
    failed = check()
    assert failed.returncode == 2 and "SCORER-BUG-7" in failed.stderr
    skipped = check("--no-run")
    assert skipped.returncode == 0, skipped.stderr
    assert "running sample" not in skipped.stderr and "ready" in skipped.stdout
