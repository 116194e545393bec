"""The ``results`` protocol (Codabench/CodaLab result submissions): the upload is ``input/res``.

On Codabench a result submission is a zip whose content the scoring program finds in
``/app/input/res``. Here the unpacked upload, as a whole, is the one "case" of every task of
the phase: the scoring program (with Codabench's mount points) reads it as its outputs folder.
There is no public split to score at the quiz (a bundle has no public references); the prep
stage checks that the upload holds plain files within ``upload_bytes``, and refuses an upload
whose ``metadata`` names a ``command`` (a program, which Codabench would run: scored as a result
it would get a wrong score). Code submissions are the ``ingestion`` protocol's
(``protocols.ingestion``), or run beside the scoring program by the scorer itself
(``concurrent_ingestion``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import ClassVar

from proctor.entries import Manifest
from proctor.protocols.base import FilesDriver
from proctor.protocols.codabench_settings import ResultsProtocol
from proctor.protocols.upload_program import command_problem
from proctor.spec.protocols import ProtocolSettings

SUBMISSION = "submission"
"""The name of the one case of a task (what the scoring program's case list holds)."""
MAX_PROBLEMS = 20


def _results_settings(settings: ProtocolSettings) -> ResultsProtocol:
    if not isinstance(settings, ResultsProtocol):
        raise TypeError(f"the results driver cannot run a {settings.kind!r} protocol")
    return settings


class ResultsDriver(FilesDriver):
    """Checks a result upload; the whole upload is the predictions of every task."""

    kind = "results"
    settings_model = ResultsProtocol
    summary = "Codabench-style: the uploaded folder is the scoring program's input/res"
    case_noun = "submission"
    scores_public_split: ClassVar[bool] = False

    @classmethod
    def list_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """One case per split: the upload itself."""
        return [SUBMISSION]

    @classmethod
    def output_template(cls, settings: ProtocolSettings) -> str:
        """The case's name (the scoring program reads the outputs folder as a whole)."""
        return "{record}"

    @classmethod
    def manifest(cls, settings: ProtocolSettings) -> Manifest:
        """Nothing is required: any files the scoring program reads."""
        return Manifest(required=())

    @classmethod
    def split_folder(cls, settings: ProtocolSettings, split: str) -> str:
        """The upload's root holds the predictions of both splits."""
        return "."

    def upload_path(self, split: str, case: str) -> str:
        """A name inside the upload's root, so that its parent is the root itself."""
        return case

    def check_upload(self, entry_root: Path) -> list[str]:
        """Links, special files, an upload over ``upload_bytes`` or naming a command: refused."""
        problems: list[str] = []
        program = command_problem(self.context.settings, "", entry_root)
        if program is not None:
            problems.append(program)
        total = 0
        for folder, names, files in os.walk(entry_root, followlinks=False):
            for name in [*names, *files]:
                path = Path(folder, name)
                info = path.lstat()
                relative = path.relative_to(entry_root).as_posix()
                if stat.S_ISLNK(info.st_mode):
                    problems.append(f"{relative}: a link: upload plain files only")
                elif not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                    problems.append(f"{relative}: not a regular file: upload plain files only")
                elif stat.S_ISREG(info.st_mode):
                    total += info.st_size
        limit = _results_settings(self.context.settings).upload_bytes
        if total > limit:
            problems.append(f"the files take {total} bytes, over the {limit} an upload may hold")
        if len(problems) > MAX_PROBLEMS:
            problems = [*problems[:MAX_PROBLEMS], f"... and {len(problems) - MAX_PROBLEMS} more"]
        return problems
