"""The one exception tree of Proctor.

Participant-facing failures (a bad entry, a wrong output) are kept apart from usage mistakes
(a broken challenge file, a wrong command line) and from platform faults (no working sandbox).
The tree carries no exit codes or HTTP statuses: each face maps these types to its own codes in
one table at the edge (the CLI's is ``proctor.cli.exit_status``). Each class carries its
``kind``, its name on the wire (``{"error": {"kind", "message"}}``): a subclass without a
kind of its own goes by its parent's, and ``error_type`` finds the class a kind names::

    ProctorError
    ├── UsageError               the caller must change what they asked for
    │   ├── ConfigError          a challenge.yaml (or other config) is invalid; names file + path
    │   ├── InputFileError       a file handed to a command cannot be read as what it must be
    │   ├── PhaseChoiceError     several phases are open and none was named; lists them
    │   └── EnvironmentDeclarationError   a declared environment cannot exist as written
    ├── EntryError               the participant's entry is at fault
    │   ├── ArchiveError         unsafe or malformed upload (zip bomb, zip-slip, links, devices)
    │   ├── ManifestError        required files missing, empty or not executable
    │   ├── EntryRequirementsError   requirements.txt refused (not allowed, too big, no wheel)
│   ├── ImageBuildError      a Dockerfile cannot be built (base not offered, step failed)
    │   └── OutputError          an output cannot be scored as written (ids missing, repeated)
    ├── PlatformError            the host is at fault, not the participant
    │   ├── SandboxUnavailableError   no working isolation; says how to fix the host
    │   └── EnvironmentBuildError     building an environment failed on this host
    ├── JobCancelledError        a job was stopped on request
    ├── RefusedError             the service refuses for now (quota, phase closed); says when
    ├── ForbiddenError           the caller may not do or see this
    │   ├── AuthenticationError  no valid API token
    │   └── NotFoundError        no such thing (or another team's: never "forbidden")
    └── ServerUnreachableError   the service cannot be reached at the URL given

Metrics and the file readers built on them raise ``ValueError`` subclasses of their own
(``MetricInputError``, as ``proctor.metrics`` imports nothing of Proctor); the services turn
them into ``InputFileError`` or ``UsageError`` (``proctor.services.local.input_errors``).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar


class ProctorError(Exception):
    """Base of every error Proctor raises on purpose."""

    kind: ClassVar[str] = "internal"
    """The error's name on the wire; a subclass without its own goes by its parent's."""


class UsageError(ProctorError):
    """The caller asked for something that cannot be done as asked."""

    kind = "usage"


class ConfigError(UsageError):
    """A challenge description is invalid.

    ``path`` is the file, ``location`` the YAML path of the bad key (``phases[1].tasks``).
    """

    kind = "config"

    def __init__(self, message: str, *, path: Path | str | None = None, location: str = "") -> None:
        self.path = Path(path) if path is not None else None
        self.location = location
        self.message = message
        where = str(path) if path is not None else ""
        if location:
            where = f"{where}: {location}" if where else location
        super().__init__(f"{where}: {message}" if where else message)


class InputFileError(UsageError):
    """A file given to a command is unreadable or malformed; the message names file and fix."""


class PhaseChoiceError(UsageError):
    """Several phases take submissions and none was named: ``open_phases`` lists them.

    Each face words the fix its own way (``--phase`` on the command line, the form's list).
    """

    def __init__(self, message: str, open_phases: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.open_phases = open_phases


class EntryError(ProctorError):
    """The participant's entry is at fault."""

    kind = "entry"


class ArchiveError(EntryError):
    """An uploaded archive is unsafe or malformed."""

    kind = "archive"


class EntryImageError(ArchiveError):
    """An entry's own image (``image.tar``) is unsafe, malformed, too big or not allowed."""


class ManifestError(EntryError):
    """An entry lacks a required file, or a required file is empty or not executable."""


class OutputError(EntryError):
    """An entry's output reads, but cannot be scored as written (ids unlike the solution's).

    The message names the file from its case folder, never a host path.
    """


class PlatformError(ProctorError):
    """The host, not the participant, is at fault."""

    kind = "platform"


class SandboxUnavailableError(PlatformError):
    """No working sandbox on this host; untrusted code is refused (fail closed).

    The operator must fix the host configuration before anything can run.
    """


class JobCancelledError(ProctorError):
    """A job was cancelled on request (by a face or the service); not anyone's fault."""


class EnvironmentDeclarationError(UsageError):
    """A declared environment cannot be built as written (no such package, no binary wheel)."""


class EnvironmentBuildError(PlatformError):
    """Building an environment failed on this host (disk full, a tool missing, no archive)."""


class EntryRequirementsError(EntryError):
    """An entry's ``requirements.txt`` cannot be installed (not allowed, too big, no wheel)."""


class ImageBuildError(EntryError):
    """An entry's ``Dockerfile`` cannot be built (a base not offered, a failed step, a limit).

    ``log`` is the build log so far, the entry's prep diagnostics.
    """

    def __init__(self, message: str, *, log: str = "") -> None:
        super().__init__(message)
        self.log = log


class RefusedError(ProctorError):
    """The service refuses the request under its rules now (a quota, a closed phase).

    The message says when the next attempt can succeed.
    """

    kind = "refused"


class ForbiddenError(ProctorError):
    """The caller may not do or see this."""

    kind = "forbidden"


class AuthenticationError(ForbiddenError):
    """No valid API token was presented."""

    kind = "unauthenticated"


class NotFoundError(ForbiddenError):
    """No such object, or one the caller may not know exists (another team's submission)."""

    kind = "not_found"


class ServerUnreachableError(ProctorError):
    """The Proctor server cannot be reached at the URL given."""


def error_type(kind: str) -> type[ProctorError] | None:
    """The class whose own ``kind`` is ``kind`` (the most general of those loaded), else None."""
    pending: list[type[ProctorError]] = [ProctorError]
    while pending:
        found = pending.pop(0)
        if found.__dict__.get("kind") == kind:
            return found
        pending.extend(found.__subclasses__())
    return None
