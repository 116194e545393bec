"""The CLI's one map from exception type to exit status, and the one handler that applies it.

Every ``proctor`` command runs under :class:`ProctorGroup`, so a command simply raises: the
handler looks the exception's type up along its MRO in :data:`EXIT_STATUSES` (the nearest type
listed wins), prints ``error: MESSAGE`` on stderr and exits with that status. An exception of no
listed type is a bug in Proctor: its traceback is printed, then a request to report it, exit 3.
Typer's own control flow (``--help``, usage errors, ``typer.Exit``) passes through untouched.

The table lists :mod:`proctor.errors` types: the services translate the refusals of metrics and
file readers into ``InputFileError`` or ``UsageError`` at their boundary. Their common base,
``MetricInputError``, is listed too (through the services) as a safety net for a refusal no
service can translate, such as a value a command takes lazily from segeval's evaluation.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import typer
from typer.core import TyperGroup

from proctor.cli.untrusted import visible
from proctor.errors import (
    EntryError,
    JobCancelledError,
    PlatformError,
    ProctorError,
    SandboxUnavailableError,
    UsageError,
)
from proctor.services.input_errors import MetricInputError

INTERNAL_ERROR = 3
INTERRUPTED = 130

EXIT_STATUSES: Mapping[type[BaseException], int] = MappingProxyType(
    {
        UsageError: 2,  # ConfigError, InputFileError: the caller must change the request
        EntryError: 1,  # ArchiveError, ManifestError: the participant's entry is at fault
        PlatformError: 3,  # the host is at fault
        SandboxUnavailableError: 2,  # the operator must fix the host before anything runs
        ProctorError: 1,  # the bare base is never raised; kept at its former status
        MetricInputError: 2,  # a metric or file reader refused its input: an input-file error
        KeyboardInterrupt: INTERRUPTED,  # not 1, which would read as a failed entry
        JobCancelledError: INTERRUPTED,  # stopped on request, like Ctrl-C
    }
)
"""Exit status of each exception type the CLI expects; a subclass takes its nearest ancestor's."""

_TYPER_CONTROL_FLOW = (typer.Exit, typer.Abort, typer.TyperException)


def exit_status_of(error: BaseException) -> int | None:
    """The status of the nearest type of ``error`` (along its MRO) in the map, else None."""
    for kind in type(error).__mro__:
        if kind in EXIT_STATUSES:
            return EXIT_STATUSES[kind]
    return None


def report(error: BaseException) -> int:
    """Show ``error`` on stderr the way the CLI shows failures and return its exit status."""
    status = exit_status_of(error)
    if status is None:
        typer.echo("".join(traceback.format_exception(error)), err=True, nl=False)
        typer.echo("internal error: this is a bug in Proctor, please report it", err=True)
        return INTERNAL_ERROR
    interrupted = isinstance(error, KeyboardInterrupt)
    # an error may quote an entry's file names: control characters are shown, not sent
    typer.echo("interrupted" if interrupted else visible(f"error: {error}"), err=True)
    return status


class ProctorGroup(TyperGroup):
    """The top-level ``proctor`` group: runs a command and maps what it raises to an exit status.

    Installed once with ``typer.Typer(cls=ProctorGroup)``, so it applies to every command, from
    the console script as from ``CliRunner().invoke(build_app(), ...)``.
    """

    # ``Any``: the Context class this method receives is private to typer (its vendored click).
    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except _TYPER_CONTROL_FLOW:
            raise
        except (Exception, KeyboardInterrupt) as error:
            raise typer.Exit(report(error)) from None
