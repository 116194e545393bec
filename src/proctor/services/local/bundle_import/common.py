"""What every bundle importer shares: the result it reports and unpacking a zipped source."""

from __future__ import annotations

import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from proctor.errors import ConfigError


@dataclass(frozen=True, slots=True)
class ImportResult:
    """One imported challenge: what ``proctor challenge import --json`` prints."""

    challenge: str
    path: Path
    format: str
    phases: tuple[str, ...]
    tasks: tuple[str, ...]
    leaderboards: tuple[str, ...]
    warnings: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """The result as JSON-ready data."""
        return {
            "challenge": self.challenge,
            "path": str(self.path),
            "format": self.format,
            "phases": list(self.phases),
            "tasks": list(self.tasks),
            "leaderboards": list(self.leaderboards),
            "warnings": list(self.warnings),
        }


def safe_extract(archive: Path, dest: Path) -> None:
    """Unpack ``archive`` into ``dest``: plain files and folders, nothing outside ``dest``."""
    try:
        with zipfile.ZipFile(archive) as zipped:
            for info in zipped.infolist():
                parts = PurePosixPath(info.filename.replace("\\", "/")).parts
                if not parts or info.filename.startswith("/") or ".." in parts:
                    raise ConfigError(
                        f"{info.filename!r} would land outside the folder", path=archive
                    )
                if parts[0] == "__MACOSX":
                    continue
                target = dest.joinpath(*parts)
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zipped.open(info) as source, target.open("wb") as out:
                    shutil.copyfileobj(source, out)
    except zipfile.BadZipFile as err:
        raise ConfigError(
            f"not a readable zip archive ({err}): re-create it", path=archive
        ) from None
