"""An entry uploaded the way the field makes it: one bare prediction file (``submission.csv``).

A challenge whose protocol expects one file (``ProtocolDriver.expected_file``: a Kaggle-style
predictions challenge with one hidden case and one file name, or an EvalAI-style
``single_file`` challenge) takes that file bare, or in a zip that holds only it. Either way
the service stores an archive in the protocol's layout (``test/CASE/submission.csv``), so the
worker, a rescore and the organizer's download read one kind of entry. The archive is made the
same way every time (fixed dates and modes): the same file makes the same artifact.
``proctor run submission.csv --challenge DIR`` reads a bare file the same way
(``arranged_upload``).
"""

from __future__ import annotations

import shutil
import stat
import zipfile
from pathlib import Path, PurePosixPath

from proctor.entries.unpack import open_source
from proctor.errors import ArchiveError
from proctor.protocols.base import ExpectedFile
from proctor.protocols.registry import driver_for
from proctor.spec import Challenge

ZIP_DATE = (1980, 1, 1, 0, 0, 0)
CHUNK_BYTES = 1024 * 1024


def expected_file(challenge: Challenge) -> ExpectedFile | None:
    """The one file ``challenge`` takes bare, or None when it takes archives only."""
    driver = driver_for(challenge.protocol.kind)
    cases: dict[str, None] = {}
    for task in challenge.tasks:
        if task.hidden_inputs is not None:
            cases |= dict.fromkeys(driver.list_cases(challenge.protocol, task.hidden_inputs))
    return driver.expected_file(challenge.protocol, tuple(cases))


def base_name(file_name: str | None) -> str:
    """The file's own name from what a browser or client sent (no folders, no drive)."""
    if not file_name:
        return ""
    return PurePosixPath(file_name.replace("\\", "/")).name


def bare_refusal(name: str, expected: ExpectedFile | None) -> ArchiveError:
    """Why a file that is not an archive cannot be this challenge's entry, and the fix."""
    shown = name or "the upload"
    if expected is None:
        return ArchiveError(
            f"{shown} is not a zip, tar.gz or tar archive, and this challenge takes no bare "
            "file: upload the entry as a .zip or .tar.gz file"
        )
    return ArchiveError(
        f"{shown} is not an archive, and not the file this challenge takes bare: name your "
        f"predictions {expected.names()} and upload that file (or a .zip holding "
        f"{expected.place(expected.patterns[0])})"
    )


def wrap(source: Path, place: str, dest: Path) -> Path:
    """Write ``dest``, a zip holding ``source`` as ``place`` (fixed date and mode)."""
    info = zipfile.ZipInfo(place, date_time=ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (stat.S_IFREG | 0o644) << 16
    with (
        zipfile.ZipFile(dest, "w") as archive,
        source.open("rb") as stream,
        archive.open(info, "w") as member,
    ):
        shutil.copyfileobj(stream, member, CHUNK_BYTES)
    return dest


def arranged_upload(challenge: Challenge, upload: Path, scratch: Path) -> Path:
    """``upload`` as an entry to unpack: an archive or folder as is, a bare file wrapped.

    A file that is no archive must be the file ``challenge`` expects (``ArchiveError`` naming
    the name to use otherwise); it is wrapped into ``scratch/bare.zip``.
    """
    if upload.is_dir():
        return upload
    try:
        open_source(upload)
    except ArchiveError:
        expected = expected_file(challenge)
        if expected is None or not expected.accepts(upload.name):
            raise bare_refusal(upload.name, expected) from None
        return wrap(upload, expected.place(upload.name), scratch / "bare.zip")
    return upload


def place_lone_file(challenge: Challenge, root: Path) -> None:
    """Move the expected file where the protocol reads it when ``root`` holds only that file.

    The local run's counterpart of the service storing such a zip in the protocol's layout.
    """
    expected = expected_file(challenge)
    lone = lone_expected_file(root, expected)
    if lone is None or expected is None:
        return
    target = root / expected.place(lone.name)
    target.parent.mkdir(parents=True)
    lone.rename(target)


def lone_expected_file(root: Path, expected: ExpectedFile | None) -> Path | None:
    """The expected file when an unpacked archive holds only it at its root (else None).

    Only where the protocol places the file deeper (``test/CASE/``): a ``single_file``
    entry is read at the root as it is.
    """
    if expected is None or not expected.folder:
        return None
    items = list(root.iterdir())
    if len(items) != 1:
        return None
    (item,) = items
    info = item.lstat()
    if stat.S_ISREG(info.st_mode) and expected.accepts(item.name):
        return item
    return None
