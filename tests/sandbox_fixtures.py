"""Fixtures of the sandbox tests (real bubblewrap, no fakes).

Loaded for every test module by ``tests/conftest.py``; plain helpers live in
``sandbox_helpers``.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings
from sandbox_helpers import SLOT_BASE


@pytest.fixture
def sandbox_settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "work", slot_uid_base=SLOT_BASE)


@pytest.fixture
def sandbox(sandbox_settings: Settings) -> BwrapSandbox:
    return BwrapSandbox(sandbox_settings)


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder every slot uid can traverse (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="proctor-sbx-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
