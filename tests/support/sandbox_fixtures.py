"""Fixtures of the sandbox tests (real bubblewrap, no fakes).

Loaded for every test module by ``tests/conftest.py``; plain helpers live in
``sandbox_helpers``.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sandbox_helpers import SLOT_BASE

from proctor.sandbox.base import Outcome
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings


@pytest.fixture
def sandbox_settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "work", slot_uid_base=SLOT_BASE)


class RootedSandbox(BwrapSandbox):
    """The bwrap backend with every run on an environment's tree as its root."""

    def __init__(self, settings: Settings, root_dir: Path) -> None:
        super().__init__(settings)
        self.root_dir = root_dir

    def run_in_group(self, *args: Any, **kwargs: Any) -> Outcome:
        kwargs["root_dir"] = kwargs.get("root_dir") or self.root_dir
        return super().run_in_group(*args, **kwargs)


ROOTS = ["host", "environment"]
"""Attack suites run with ``pytest.mark.parametrize("sandbox", ROOTS, indirect=True)``: on the
host's /usr and on the reference environment as the root."""


@pytest.fixture
def sandbox(sandbox_settings: Settings, request: pytest.FixtureRequest) -> BwrapSandbox:
    if getattr(request, "param", "host") == "environment":
        built = request.getfixturevalue("reference_env")
        return RootedSandbox(sandbox_settings, built.rootfs)
    return BwrapSandbox(sandbox_settings)


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder every slot uid can traverse (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="proctor-sbx-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
