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

import json
import traceback
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import typer
from typer.core import TyperGroup

from proctor.cli.untrusted import visible
from proctor.errors import (
    ConfigError,
    EntryError,
    ForbiddenError,
    InputFileError,
    JobCancelledError,
    NotFoundError,
    PlatformError,
    ProctorError,
    RefusedError,
    SandboxUnavailableError,
    ServerUnreachableError,
    UsageError,
)
from proctor.services.local.input_errors import MetricInputError

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
        RefusedError: 4,  # the service's rules refuse it now (quota, phase closed)
        ForbiddenError: 5,  # not allowed, or not found (another team's submission)
        ServerUnreachableError: 6,  # no Proctor server at the URL given
    }
)
"""Exit status of each exception type the CLI expects; a subclass takes its nearest ancestor's."""


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
        as_json = _json_requested(ctx)
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort):
            raise
        except BrokenPipeError:  # the reader went away (`proctor ... | head`): click quiets
            raise  # the streams and exits 1, as on EPIPE anywhere: not a bug of Proctor's
        except typer.TyperException as error:  # the command line itself is wrong
            if not as_json:
                raise
            print_json_error("usage", _usage_text(error), USAGE_STATUS)
            raise typer.Exit(USAGE_STATUS) from None
        except (Exception, KeyboardInterrupt) as error:
            status = report(error)
            if as_json:
                print_json_error(error_kind(error), str(error), status)
            raise typer.Exit(status) from None


USAGE_STATUS = 2
_KINDS: tuple[tuple[type[BaseException], str], ...] = (
    (JobCancelledError, "cancelled"),
    (RefusedError, "refused"),
    (NotFoundError, "not_found"),
    (ForbiddenError, "forbidden"),
    (ServerUnreachableError, "unreachable"),
    (SandboxUnavailableError, "sandbox"),
    (ConfigError, "config"),
    (InputFileError, "input"),
    (UsageError, "usage"),
    (EntryError, "entry"),
    (PlatformError, "platform"),
    (KeyboardInterrupt, "interrupted"),
)


def error_kind(error: BaseException) -> str:
    """The ``kind`` of an error in ``--json`` output (``internal`` for a bug)."""
    for kind, name in _KINDS:
        if isinstance(error, kind):
            return name
    return "input" if exit_status_of(error) == USAGE_STATUS else "internal"


def print_json_error(kind: str, message: str, status: int) -> None:
    """``{"error": {"kind", "message", "exit_status"}}`` on stdout: one shape for every command."""
    payload = {"error": {"kind": kind, "message": message, "exit_status": status}}
    typer.echo(json.dumps(payload))


def _json_requested(ctx: Any) -> bool:
    args = [*getattr(ctx, "protected_args", []), *getattr(ctx, "args", [])]
    return "--json" in args


def _usage_text(error: BaseException) -> str:
    formatter = getattr(error, "format_message", None)
    return str(formatter()) if callable(formatter) else str(error)
