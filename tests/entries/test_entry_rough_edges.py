"""Hardening item 15: a newcomer's entry fails with messages that say what to fix."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest
from toy_challenge import GOOD_NEXT, make_challenge, make_entry

from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


def prep_message(tmp_path: Path, settings: Settings, entry: Path, **limits: float) -> str:
    challenge = make_challenge(tmp_path / "challenge", **limits)
    report = run_entry(RunRequest(entry, str(challenge), jobs=2), settings)
    return report.stages[0].message


def test_windows_line_endings_are_named(tmp_path: Path, settings: Settings) -> None:
    entry = make_entry(tmp_path / "entry", setup_sh="#!/bin/sh\r\necho hi\r\n")
    message = prep_message(tmp_path, settings, entry)
    assert "Windows (CRLF) line endings" in message and "setup.sh" in message


def test_a_missing_interpreter_is_named(tmp_path: Path, settings: Settings) -> None:
    entry = make_entry(tmp_path / "entry", setup_sh="#!/usr/bin/python9\nprint(1)\n")
    message = prep_message(tmp_path, settings, entry)
    assert "/usr/bin/python9" in message and "does not exist in the sandbox" in message


def test_a_zip_without_executable_bits_runs_and_says_so(tmp_path: Path, settings: Settings) -> None:
    source = make_entry(tmp_path / "source")
    archive = tmp_path / "entry.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for path in sorted(source.rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo(str(path.relative_to(source)))
                info.external_attr = (stat.S_IFREG | 0o644) << 16  # as Windows tools write
                handle.writestr(info, path.read_bytes())
    challenge = make_challenge(tmp_path / "challenge")
    report = run_entry(RunRequest(archive, str(challenge), jobs=2), settings)
    assert report.status.value == "scored", report.to_json()
    assert "made executable: next.sh, setup.sh" in report.stages[0].message


def test_a_quiz_timeout_names_the_limit(tmp_path: Path, settings: Settings) -> None:
    entry = make_entry(tmp_path / "entry", next_sh="#!/bin/sh\nsleep 30\n" + GOOD_NEXT[10:])
    challenge = make_challenge(tmp_path / "challenge", case_s=1)
    report = run_entry(RunRequest(entry, str(challenge), jobs=2), settings)
    quiz = report.stages[1]
    assert "timed out after 1 second (the limit per record)" in quiz.message
