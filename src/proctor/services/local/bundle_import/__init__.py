"""``proctor challenge import``: another platform's challenge becomes a Proctor challenge folder.

Each format has a detector (does this unpacked source look like it?) and an importer; the
first format whose detector accepts the source imports it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from proctor.errors import ConfigError
from proctor.services.local.bundle_import import evalai
from proctor.services.local.bundle_import.common import ImportResult, safe_extract

Importer = Callable[[Path, Path, "str | None"], ImportResult]
FORMATS: tuple[tuple[str, Callable[[Path], bool], Importer], ...] = (
    ("evalai", evalai.detect, evalai.import_evalai),
)


def import_challenge(source: Path, dest: Path, environment: str | None = None) -> ImportResult:
    """Import ``source`` (a folder or a zip) into the new folder ``dest``.

    ``environment``: the scoring environment (a bundled name or a folder holding
    ``environment.yaml``) instead of the format's default.
    """
    if dest.exists() and any(dest.iterdir()):
        raise ConfigError(f"{dest} exists and is not empty: choose a new folder", path=dest)
    with tempfile.TemporaryDirectory(prefix="proctor-import-") as scratch:
        root = source
        if source.is_file():
            root = Path(scratch) / "source"
            safe_extract(source, root)
        elif not source.is_dir():
            raise ConfigError("no such folder or zip archive", path=source)
        for _name, detect, importer in FORMATS:
            if detect(root):
                return importer(root, dest, environment)
    known = ", ".join(name for name, _detect, _importer in FORMATS)
    raise ConfigError(f"not a challenge bundle this version imports ({known})", path=source)
