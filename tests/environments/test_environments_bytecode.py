"""Bytecode stays valid in an image whose files all have time 0 (``mkfs.erofs -T0``)."""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys
from pathlib import Path

from proctor.environments.bytecode import settle_bytecode


def _tree(root: Path) -> Path:
    package = root / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    module = package / "mod.py"
    module.write_text("VALUE = 42\n")
    os.utime(module, (1_700_000_000, 1_700_000_000))
    for source in package.glob("*.py"):
        py_compile.compile(str(source), doraise=True)
    return module


def _as_packed(root: Path) -> None:
    """What the image shows: every file's time 0."""
    for path in root.rglob("*"):
        os.utime(path, (0, 0), follow_symlinks=False)


def _import_log(root: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-v", "-c", "import pkg.mod"],
        cwd=root, capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(root)},
    )  # fmt: skip
    return done.stderr


def test_without_settling_the_packed_bytecode_is_stale(tmp_path: Path) -> None:
    _tree(tmp_path)
    _as_packed(tmp_path)
    assert "bytecode is stale for 'pkg.mod'" in _import_log(tmp_path)


def test_settled_bytecode_matches_its_source_once_packed(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert settle_bytecode(tmp_path) == 2
    _as_packed(tmp_path)
    log = _import_log(tmp_path)
    assert "stale" not in log
    assert "mod.cpython" in log and "matches" in log


def test_a_pyc_already_stale_is_left_alone(tmp_path: Path) -> None:
    module = _tree(tmp_path)
    compiled = next((module.parent / "__pycache__").glob("mod.*.pyc"))
    module.write_text("VALUE = 43\n")  # the source changed after compiling
    before = compiled.read_bytes()
    settle_bytecode(tmp_path)
    assert compiled.read_bytes() == before
    _as_packed(tmp_path)
    assert "bytecode is stale for 'pkg.mod'" in _import_log(tmp_path)
