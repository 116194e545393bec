"""Fixtures shared by every test module.

Under pytest-xdist (``make test`` runs two workers) each worker's evaluations get their own slot
uids (``PROCTOR_SLOT_UID_BASE``, 10,000 apart), as explicit-slot runs do (``sandbox_helpers``).

Entry images and Dockerfile builds that the run made in the shared environment store (about
1.5 GB each when built on a declared environment) are removed when the whole run ends; the
declared environments and the builds' exported bases stay, so the next run reuses them. What
another process is building or importing (a second test session on the same store) is left.
"""

import os
import time
from pathlib import Path

import pytest
from sandbox_helpers import EVALUATION_UID_BASE

from proctor.environments.entry_images import PARTIAL
from proctor.environments.mounts import remove_tree
from proctor.pipeline.image_build import stored_builds
from proctor.settings import Settings

os.environ.setdefault("PROCTOR_SLOT_UID_BASE", str(EVALUATION_UID_BASE))

pytest_plugins = [
    "sandbox_fixtures",
    "environment_fixtures",
    "db_fixtures",
    "browser_fixtures",
    "signal_fixtures",
    "smtp_fixtures",
    "kit_audit",
]

KEPT_IN_BUILDS = {"bases"}
_started = time.time()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Remove what this run added to the store's entry images and builds (controller only)."""
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the other may still use them
    store = Settings.from_env().environments
    builds = store / "entry-builds"
    removable = {*stored_builds(builds), *_finished_images(store / "entry-images")}
    for entry in removable:
        if entry.name not in KEPT_IN_BUILDS and _made_since_start(entry):
            _remove(entry)


def _finished_images(images: Path) -> list[Path]:
    """Imported images, not those another process (a second test session) is importing."""
    if not images.is_dir():
        return []
    return [path for path in images.iterdir() if path.name.startswith("sha256-")
            and PARTIAL not in path.name]  # fmt: skip


def _made_since_start(entry: Path) -> bool:
    try:
        return entry.lstat().st_mtime >= _started - 1
    except OSError:
        return False


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        remove_tree(entry)
    else:
        entry.unlink(missing_ok=True)
