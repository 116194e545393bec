"""Hardening item 12: entry output and archive names reach the terminal as plain, visible text."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from toy_challenge import make_challenge, make_entry

PROCTOR = Path(sys.executable).parent / "proctor"
HOSTILE = (
    r"printf '[/] [bold red]x[/] \033]8;;http://evil/\033\\link\033]8;;\033\\ \033[2J "
    r"\033]0;owned\007 \033[31mred\n' >&2"
)


def run(*args: str, work_root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROCTOR_WORK_ROOT": str(work_root), "COLUMNS": "200"}
    return subprocess.run(
        [str(PROCTOR), *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


@pytest.mark.sandbox
@pytest.mark.slow
def test_setup_output_with_markup_and_escapes_is_shown_inert(
    tmp_path: Path, shared_dir: Path
) -> None:
    challenge = make_challenge(tmp_path / "challenge")
    entry = make_entry(tmp_path / "entry", setup_sh=f"#!/bin/sh\n{HOSTILE}\nexit 1\n")
    done = run("run", str(entry), "-c", str(challenge), work_root=shared_dir)
    assert done.returncode == 1, done.stderr[-2000:]
    for stream in (done.stdout, done.stderr):
        assert "\x1b]" not in stream and "\x07" not in stream and "\x1b[2J" not in stream
    assert "[/]" in done.stdout  # the markup is printed, not interpreted
    assert "\\x1b" in done.stdout  # escapes are made visible


def test_an_archive_name_with_escapes_is_reported_visibly(tmp_path: Path, shared_dir: Path) -> None:
    challenge = make_challenge(tmp_path / "challenge")
    archive = tmp_path / "entry.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("setup.sh", "#!/bin/sh\n")
        handle.writestr("../\x1b]0;owned\x07.sh", "x")
    done = run("run", str(archive), "-c", str(challenge), work_root=shared_dir)
    assert done.returncode == 1
    assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout + done.stderr
