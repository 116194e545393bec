"""The ``single_file`` protocol (EvalAI-style): the entry is one file, no code runs.

The participant uploads the file they would upload to EvalAI: bare, as on EvalAI, or in a
zip holding that one file. Every split and task of the phase scores that same file: the quiz
against the public references (EvalAI publishes none: the ``evalai`` scorer then scores
nothing and says so), the score stage against the hidden ones. Prep checks there is exactly
one file, its name and its size. Nothing here opens a sandbox.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

from pydantic import Field

from proctor.entries import Manifest
from proctor.protocols.base import PUBLIC, ExpectedFile, FilesDriver
from proctor.spec.protocols import ProtocolSettings
from proctor.wording import noun


class SingleFileProtocol(ProtocolSettings):
    """EvalAI-style: the entry is one file (uploaded bare or in a zip); no code runs.

    The same file is scored on every split and task of the phase (the scorer picks what it
    needs: EvalAI's ``evaluate`` returns every split at once). Its name matches one of
    ``file_patterns`` (shell patterns) and it is at most ``file_bytes``; any content (JSON,
    CSV, a compressed array...) is the scorer's to read.
    """

    kind: Literal["single_file"]
    file_patterns: tuple[str, ...] = Field(default=("*",), min_length=1)
    file_bytes: int = Field(default=64 * 1024**2, gt=0, strict=True)


def _settings(settings: ProtocolSettings) -> SingleFileProtocol:
    if not isinstance(settings, SingleFileProtocol):
        raise TypeError(f"the single_file driver cannot run a {settings.kind!r} protocol")
    return settings


class SingleFileDriver(FilesDriver):
    """Checks that the upload is one file and hands it to the scorer for every split."""

    kind = "single_file"
    settings_model = SingleFileProtocol
    summary = "EvalAI-style: one uploaded file scored on every split, no code runs"
    case_noun = "case"

    @classmethod
    def list_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """The one case of a task's split: its inputs folder, by name."""
        return [folder.name]

    @classmethod
    def output_template(cls, settings: ProtocolSettings) -> str:
        """The upload's one file, whatever its name (the scorer finds it)."""
        return "*"

    @classmethod
    def manifest(cls, settings: ProtocolSettings) -> Manifest:
        """Nothing named: ``check_upload`` wants exactly one file."""
        return Manifest(required=())

    @classmethod
    def expected_file(
        cls, settings: ProtocolSettings, hidden_cases: tuple[str, ...]
    ) -> ExpectedFile | None:
        """The one file, at the entry's root, named as ``file_patterns`` allow."""
        return ExpectedFile(_settings(settings).file_patterns, "")

    @classmethod
    def split_folder(cls, settings: ProtocolSettings, split: str) -> str:
        """A name for the split in messages and kits (the upload has no split folders)."""
        return "public" if split == PUBLIC else "hidden"

    def upload_path(self, split: str, case: str) -> str:
        """The upload's file is named by ``prediction``; this names it in messages."""
        return "the uploaded file"

    def prediction(self, entry_root: Path, split: str, case: str) -> Path:
        """The upload's one file (the same for every split and case)."""
        files = sorted(path for path in entry_root.iterdir() if path.is_file())
        return files[0] if files else entry_root / "missing"

    def check_upload(self, entry_root: Path) -> list[str]:
        """One regular file at the top, with an allowed name and size."""
        protocol = _settings(self.context.settings)
        items = sorted(entry_root.iterdir(), key=lambda path: path.name)
        files = [path for path in items if path.is_file() and not path.is_symlink()]
        if len(items) != 1 or len(files) != 1:
            names = ", ".join(path.name for path in items[:5]) or "nothing"
            return [
                f"the upload must be one file (zip that one file); it holds {len(items)} "
                f"{noun(len(items), 'item')}: {names}"
            ]
        found = files[0]
        problems = []
        if not any(fnmatchcase(found.name, pattern) for pattern in protocol.file_patterns):
            allowed = ", ".join(protocol.file_patterns)
            problems.append(f"{found.name}: not an allowed file name (allowed: {allowed})")
        size = found.stat().st_size
        if size > protocol.file_bytes:
            problems.append(f"{found.name}: {size} bytes, over the {protocol.file_bytes} allowed")
        return problems
