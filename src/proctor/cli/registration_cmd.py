"""Registration per challenge: ``register`` (a participant) and ``registrations`` (organizers).

Client commands like the other service commands: ``--server`` (``PROCTOR_SERVER``) and
``--token`` (``PROCTOR_TOKEN``), ``--json`` for one JSON object on stdout.
"""

from __future__ import annotations

from typing import Annotated

import typer

from proctor.cli.team_cmd import JsonOpt, ServerOpt, TokenOpt, _client, _print
from proctor.cli.untrusted import plain
from proctor.errors import UsageError


def register_cmd(
    challenge: Annotated[str, typer.Argument(help="The challenge to take part in.")],
    accept_terms: Annotated[
        bool, typer.Option("--accept-terms", help="Accept the challenge's current terms.")
    ] = False,
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Register to a challenge, accepting its terms (read them on its Terms page first)."""
    client = _client(server, token)
    shown = client.registration(challenge)
    if shown.required and shown.state == "none" and not accept_terms:
        raise UsageError(
            f"read the terms on the challenge's Terms page ({client.server}/challenges/"
            f"{challenge}/pages/terms), then run again with --accept-terms"
        )
    if shown.required and shown.state == "none":
        shown = client.register(challenge, shown.terms_version)
    if as_json:
        _print(shown)
        return
    if not shown.required:
        typer.echo(f"{plain(challenge)} asks for no registration: you may take part")
        return
    why = f" ({shown.reason})" if shown.reason else ""
    typer.echo(plain(f"{challenge}: {shown.state}{why}"))


def registrations_cmd(  # noqa: PLR0917 - typer maps parameters to options
    challenge: Annotated[str, typer.Argument(help="The challenge.")],
    approve: Annotated[
        list[str] | None, typer.Option("--approve", help="Approve this user (repeatable).")
    ] = None,
    deny: Annotated[
        list[str] | None, typer.Option("--deny", help="Deny this user (repeatable).")
    ] = None,
    invite: Annotated[
        list[str] | None,
        typer.Option("--invite", help="Invite this user name or email (invite mode; repeatable)."),
    ] = None,
    as_csv: Annotated[
        bool, typer.Option("--csv", help="Print the participants CSV instead.")
    ] = False,
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List a challenge's registrations, approve or deny them, invite people (organizers)."""
    client = _client(server, token)
    for user in approve or []:
        client.decide(challenge, user, "approve")
    for user in deny or []:
        client.decide(challenge, user, "deny")
    if invite:
        client.invite_people(challenge, invite)
    if as_csv:
        typer.echo(client.participants_csv(challenge), nl=False)
        return
    listed = client.registrations(challenge)
    if as_json:
        _print(listed)
        return
    typer.echo(plain(f"{challenge}: mode {listed.mode}, {listed.pending} pending"))
    for row in listed.registrations:
        line = f"{row.user}  {row.state}  {row.team or '-'}  {row.registered}  {row.submissions}"
        typer.echo(plain(line))


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``register`` and ``registrations``."""
    del score
    app.command("register")(register_cmd)
    app.command("registrations")(registrations_cmd)
