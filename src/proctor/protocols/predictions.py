"""The ``predictions`` protocol (eHealth-KD, Kaggle-style): the entry is files, no code runs.

Participants annotate public inputs and upload what they made::

    dev/CASE/...     optional (unless ``public_required``): predictions on the public split,
                     scored at the quiz against public references
    test/CASE/...    predictions on the hidden split's inputs (scored against hidden references)
    DRYRUN           optional: stop after the quiz

When the challenge expects one file (one hidden case, one ``file_patterns`` name), that file
may be uploaded bare (``submission.csv``): it is the test split's (``expected_file``).

A case is named by its inputs folder (``data/test/scenario1-main`` → ``scenario1-main``), so
the upload's ``test/`` folder is laid out as the official submission folder. The prep stage
checks the whole layout (every case of every task), the encoding and the sizes, reporting
every problem at once; the scorer's own check then reads each case's files as the scorer will.
Nothing here opens a sandbox.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from proctor.entries import Manifest
from proctor.entries.manifest import DRY_RUN_FILE
from proctor.protocols.base import HIDDEN, PUBLIC, ExpectedFile, FilesDriver
from proctor.spec.protocols import LocatedError, ProtocolSettings

_FOLDER_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class PredictionsProtocol(ProtocolSettings):
    """Kaggle-style: the entry is prediction files made on public inputs; no code runs.

    The upload holds ``public_folder/CASE/`` (predictions on the public split, scored at the
    quiz against public references) and ``hidden_folder/CASE/`` (predictions on the hidden
    split's public inputs, scored against hidden references). A case is named by its inputs
    folder (``data/test/scenario1-main`` → ``scenario1-main``). Every prediction file matches
    one of ``file_patterns`` (shell patterns), is UTF-8 text and at most ``file_bytes``; the
    whole upload is at most ``upload_bytes``. Besides the split folders only ``DRYRUN`` and
    ``other_files`` may lie at the top of the upload. The public split's predictions may be
    left out (the quiz is then skipped) unless ``public_required`` is true.
    """

    kind: Literal["predictions"]
    public_folder: str = Field(default="dev", pattern=_FOLDER_NAME)
    hidden_folder: str = Field(default="test", pattern=_FOLDER_NAME)
    file_patterns: tuple[str, ...] = Field(default=("*",), min_length=1)
    other_files: tuple[str, ...] = ("README.md", "AUTHORS.txt", "LICENSE.txt")
    file_bytes: int = Field(default=16 * 1024**2, gt=0, strict=True)
    upload_bytes: int = Field(default=64 * 1024**2, gt=0, strict=True)
    public_required: bool = False

    @model_validator(mode="after")
    def _two_folders(self) -> PredictionsProtocol:
        if self.public_folder == self.hidden_folder:
            raise LocatedError("must differ from public_folder", "hidden_folder")
        return self


MAX_PROBLEMS = 20
"""Problems listed at most (the count of the others is given)."""


def _predictions_settings(settings: ProtocolSettings) -> PredictionsProtocol:
    if not isinstance(settings, PredictionsProtocol):
        raise TypeError(f"the predictions driver cannot run a {settings.kind!r} protocol")
    return settings


def utf8_problem(path: Path) -> str | None:
    """None when ``path`` is UTF-8 text, else where the first bad byte is (line and byte)."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        return f"line {line}: not UTF-8 text (byte {err.start}: {err.reason}); save it as UTF-8"
    return None


class PredictionsDriver(FilesDriver):
    """Checks an upload of prediction files and names the files of each case."""

    kind = "predictions"
    settings_model = PredictionsProtocol
    summary = "Kaggle-style: uploaded prediction files, no code runs"
    case_noun = "case"

    @property
    def protocol(self) -> PredictionsProtocol:
        """The challenge's predictions settings."""
        return _predictions_settings(self.context.settings)

    @classmethod
    def list_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """The one case of a task's split: its inputs folder, by name."""
        return [folder.name]

    @classmethod
    def output_template(cls, settings: ProtocolSettings) -> str:
        """Each case's predictions are the folder named after the case."""
        return "{record}"

    @classmethod
    def manifest(cls, settings: ProtocolSettings) -> Manifest:
        """The hidden split's folder, not empty; the public one too when it is required."""
        protocol = _predictions_settings(settings)
        public, hidden = f"{protocol.public_folder}/", f"{protocol.hidden_folder}/"
        if protocol.public_required:
            return Manifest(required=(public, hidden))
        return Manifest(required=(hidden,), optional=(public,))

    @classmethod
    def expected_file(
        cls, settings: ProtocolSettings, hidden_cases: tuple[str, ...]
    ) -> ExpectedFile | None:
        """With one hidden case and one file name (not ``*``): ``test/CASE/NAME``."""
        protocol = _predictions_settings(settings)
        patterns = protocol.file_patterns
        if len(hidden_cases) != 1 or len(patterns) != 1 or patterns[0] == "*":
            return None
        if protocol.public_required:
            return None  # a bare file has no public split's predictions
        return ExpectedFile(patterns, f"{protocol.hidden_folder}/{hidden_cases[0]}")

    def public_uploaded(self, entry_root: Path) -> bool:
        """Whether the upload holds the public split's folder."""
        return (entry_root / self.protocol.public_folder).is_dir()

    @classmethod
    def split_folder(cls, settings: ProtocolSettings, split: str) -> str:
        """``public_folder`` (``dev``) or ``hidden_folder`` (``test``)."""
        protocol = _predictions_settings(settings)
        return protocol.public_folder if split == PUBLIC else protocol.hidden_folder

    def check_upload(self, entry_root: Path) -> list[str]:
        """Every problem of layout, encoding and size, the first ``MAX_PROBLEMS`` of them."""
        problems = self._missing_cases(entry_root)
        total = 0
        for relative, info in _walk(entry_root, self._misplaced):
            problem = self._misplaced(relative, info)
            if problem is None and stat.S_ISREG(info.st_mode):
                total += info.st_size
                problem = self._file_problem(entry_root / relative, info)
            if problem is not None:
                problems.append(f"{relative}: {problem}")
        if total > self.protocol.upload_bytes:
            problems.append(
                f"the files take {total} bytes, over the {self.protocol.upload_bytes} an upload "
                "may hold: leave out what is not a prediction"
            )
        if len(problems) > MAX_PROBLEMS:
            more = len(problems) - MAX_PROBLEMS
            problems = [*problems[:MAX_PROBLEMS], f"... and {more} more problems"]
        return problems

    def _missing_cases(self, entry_root: Path) -> list[str]:
        missing = []
        splits: tuple[str, ...] = (PUBLIC, HIDDEN)
        if not self.protocol.public_required and not self.public_uploaded(entry_root):
            splits = (HIDDEN,)  # no dev/ at all: optional; a partial one is checked whole
        for split in splits:
            for case in self.context.cases.get(split, ()):
                if not (entry_root / self.upload_path(split, case)).is_dir():
                    missing.append(
                        f"{self.upload_path(split, case)}/: missing: the upload needs one folder "
                        f"per case in {self.folder_of(split)}/ ({self._case_list(split)})"
                    )
        return missing

    def _case_list(self, split: str) -> str:
        return ", ".join(self.context.cases.get(split, ())) or "none"

    def _misplaced(self, relative: str, info: os.stat_result) -> str | None:
        """What is wrong with where (or what) an upload item is; None when it belongs there."""
        if stat.S_ISLNK(info.st_mode):
            return "a link: upload plain files only"
        is_dir = stat.S_ISDIR(info.st_mode)
        if not is_dir and not stat.S_ISREG(info.st_mode):
            return "not a regular file: upload plain files only"
        parts = relative.split("/")
        splits = {self.folder_of(PUBLIC): PUBLIC, self.folder_of(HIDDEN): HIDDEN}
        if len(parts) == 1:
            allowed_files = (DRY_RUN_FILE, *self.protocol.other_files)
            if (is_dir and parts[0] in splits) or (not is_dir and parts[0] in allowed_files):
                return None
            return f"not part of a predictions upload: {self._layout()}"
        split = splits[parts[0]]
        if len(parts) == 2:
            cases = self.context.cases.get(split, ())
            # no cases: a kit's replica without hidden data, whose test/ is kept, not scored
            if is_dir and (parts[1] in cases or not cases):
                return None
            return f"not a case of {parts[0]}/: its cases are {self._case_list(split)}"
        if len(parts) == 3 and not is_dir:
            if any(fnmatchcase(parts[2], pattern) for pattern in self.protocol.file_patterns):
                return None
            return f"not a prediction file name (allowed: {', '.join(self.protocol.file_patterns)})"
        return f"too deep: {self._layout()}"

    def _layout(self) -> str:
        public, hidden = self.folder_of(PUBLIC), self.folder_of(HIDDEN)
        return (
            f"predictions go in {hidden}/CASE/ (and {public}/CASE/ for the public split), "
            "files only, no sub-folders"
        )

    def _file_problem(self, path: Path, info: os.stat_result) -> str | None:
        limit = self.protocol.file_bytes
        if info.st_size > limit:
            return f"{info.st_size} bytes, over the {limit} a prediction file may hold"
        return utf8_problem(path)


def _walk(
    root: Path, misplaced: Callable[[str, os.stat_result], str | None]
) -> list[tuple[str, os.stat_result]]:
    """Every item below ``root`` (relative POSIX path, lstat), sorted; links are not followed.

    A folder ``misplaced`` refuses is listed but not entered (its own problem is enough).
    """
    found: list[tuple[str, os.stat_result]] = []
    pending = [""]
    while pending:
        folder = pending.pop()
        for item in sorted((root / folder).iterdir(), key=lambda path: path.name):
            relative = f"{folder}/{item.name}" if folder else item.name
            info = item.lstat()
            found.append((relative, info))
            if stat.S_ISDIR(info.st_mode) and misplaced(relative, info) is None:
                pending.append(relative)
    return sorted(found, key=lambda entry: entry[0])
