"""API tokens: ``token show``, ``token revoke`` (client commands) and ``token new`` (data folder).

``show`` and ``revoke`` talk to ``--server`` (``PROCTOR_SERVER``) with ``--token``
(``PROCTOR_TOKEN``); ``new`` works on the data folder or database directly, as ``user add``
does, so an operator can issue a token when none is left. A revoked or expired token is
refused (exit status 5).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from proctor.cli.api_client import print_json
from proctor.cli.data_folder import operator_settings
from proctor.cli.untrusted import plain
from proctor.services.platform.client import Client
from proctor.settings import ServiceSettings
from proctor.wording import plural

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
ServerOpt = Annotated[
    str | None, typer.Option("--server", help="Server URL (PROCTOR_SERVER).", show_default=False)
]
TokenOpt = Annotated[
    str | None, typer.Option("--token", help="API token (PROCTOR_TOKEN).", show_default=False)
]
UserArg = Annotated[
    str | None, typer.Argument(help="The user (organizers; default: yourself).", show_default=False)
]


def _client(server: str | None, token: str | None) -> Client:
    settings = ServiceSettings.from_env()
    return Client(server or settings.server, token or settings.token)


_print = print_json


def show_cmd(
    user: UserArg = None, server: ServerOpt = None, token: TokenOpt = None, as_json: JsonOpt = False
) -> None:
    """List a user's API tokens: when each expires, when it was last used, revoked or not."""
    answer = _client(server, token).tokens(user)
    if as_json:
        _print(answer)
        return
    typer.echo(f"tokens of {plain(answer.user)}:")
    for row in answer.tokens:
        state = "revoked" if row.revoked else "expired" if row.expired else "valid"
        mark = " (this one)" if row.current else ""
        used = row.last_used or "never"
        typer.echo(
            f"  #{row.id} {state}{mark}: issued {row.created}, expires {row.expires}, "
            f"last used {used}"
        )


def revoke_cmd(
    user: UserArg = None, server: ServerOpt = None, token: TokenOpt = None, as_json: JsonOpt = False
) -> None:
    """Revoke every API token of a user (your own by default; organizers: anyone's).

    A revoked token is refused at once; `proctor token new USER` on the data folder issues the
    next one.
    """
    answer = _client(server, token).revoke_tokens(user)
    if as_json:
        _print(answer)
        return
    typer.echo(f"revoked {plural(answer.revoked, 'token')} of {plain(answer.user)}")


def new_cmd(
    user: Annotated[str, typer.Argument(help="The user the token is for.")],
    data: Annotated[
        Path | None,
        typer.Option("--data", help="Data folder (PROCTOR_DATA; default ./proctor-data)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Issue a new API token for a user directly in the database (shown once).

    Name the server's data folder (--data or PROCTOR_DATA): without either, ./proctor-data must
    already exist. The folder used is printed on stderr.
    """
    from proctor.services.platform import tokens  # the store: only for this command
    from proctor.services.platform.resources import open_platform

    platform = open_platform(operator_settings(data))
    try:
        issued = tokens.issue(platform, user)
    finally:
        platform.close()
    if as_json:
        _print(issued)
        return
    typer.echo(f"API token of {plain(issued.user)} (expires {issued.expires}), shown once:")
    typer.echo(issued.token)


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``token show``, ``token revoke`` and ``token new``."""
    del score
    group = typer.Typer(help="API tokens: show, revoke, issue a new one.", no_args_is_help=True)
    group.command("show")(show_cmd)
    group.command("revoke")(revoke_cmd)
    group.command("new")(new_cmd)
    app.add_typer(group, name="token")
