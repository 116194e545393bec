"""The one exception tree of Proctor.

Participant-facing failures (a bad entry, a wrong output) are kept apart from usage mistakes
(a broken challenge file, a wrong command line) and from platform faults (no working sandbox).
They become exit codes or HTTP statuses only at the edge (``cli/``, ``web/``)::

    ProctorError
    ├── UsageError               exit 2: the caller must change what they asked for
    │   ├── ConfigError          a challenge.yaml (or other config) is invalid; names file + path
    │   └── InputFileError       a file handed to a command cannot be read as what it must be
    ├── EntryError               exit 1: the participant's entry is at fault
    │   ├── ArchiveError         unsafe or malformed upload (zip bomb, zip-slip, links, devices)
    │   └── ManifestError        required files missing, empty or not executable
    └── PlatformError            exit 3: the host is at fault, not the participant
        └── SandboxUnavailableError   exit 2: no working isolation; says how to fix the host

Metrics raise ``ValueError`` subclasses of their own (``proctor.metrics`` imports nothing of
Proctor); faces treat those as ``InputFileError``.
"""

from __future__ import annotations

from pathlib import Path


class ProctorError(Exception):
    """Base of every error Proctor raises on purpose."""

    exit_code: int = 1


class UsageError(ProctorError):
    """The caller asked for something that cannot be done as asked."""

    exit_code = 2


class ConfigError(UsageError):
    """A challenge description is invalid.

    ``path`` is the file, ``location`` the YAML path of the bad key (``phases[1].tasks``).
    """

    def __init__(self, message: str, *, path: Path | str | None = None, location: str = "") -> None:
        self.path = Path(path) if path is not None else None
        self.location = location
        where = str(path) if path is not None else ""
        if location:
            where = f"{where}: {location}" if where else location
        super().__init__(f"{where}: {message}" if where else message)


class InputFileError(UsageError):
    """A file given to a command is unreadable or malformed; the message names file and fix."""


class EntryError(ProctorError):
    """The participant's entry is at fault."""

    exit_code = 1


class ArchiveError(EntryError):
    """An uploaded archive is unsafe or malformed."""


class ManifestError(EntryError):
    """An entry lacks a required file, or a required file is empty or not executable."""


class PlatformError(ProctorError):
    """The host, not the participant, is at fault."""

    exit_code = 3


class SandboxUnavailableError(PlatformError):
    """No working sandbox on this host; untrusted code is refused (fail closed).

    Exit status 2: the operator must fix the host configuration before anything can run.
    """

    exit_code = 2


class JobCancelledError(ProctorError):
    """A job was cancelled on request (by a face or the service); not anyone's fault."""

    exit_code = 130
