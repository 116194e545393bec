"""Teams and the organizer's refunds: ``team create|invite|join|leave``, ``flagged``, ``refund``.

Client commands like the other service commands: ``--server`` (``PROCTOR_SERVER``) and
``--token`` (``PROCTOR_TOKEN``), ``--json`` for one JSON object on stdout.
"""

from __future__ import annotations

from typing import Annotated

import typer

from proctor.cli.api_client import api_client, print_json
from proctor.cli.untrusted import plain

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
ServerOpt = Annotated[
    str | None, typer.Option("--server", help="Server URL (PROCTOR_SERVER).", show_default=False)
]
TokenOpt = Annotated[
    str | None, typer.Option("--token", help="API token (PROCTOR_TOKEN).", show_default=False)
]


_client = api_client


_print = print_json


def invite_cmd(
    team: Annotated[
        str | None, typer.Argument(help="The team (organizers; default: your own).")
    ] = None,
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Make a one-use code (valid 7 days) another user joins the team with."""
    answer = _client(server, token).invite(team)
    if as_json:
        _print(answer)
        return
    typer.echo(f"invitation to team {plain(answer.team)} (expires {answer.expires}):")
    typer.echo(answer.code)


def join_cmd(
    code: Annotated[str, typer.Argument(help="The invitation code.")],
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Join the team an invitation code names."""
    answer = _client(server, token).join(code)
    _print(answer) if as_json else typer.echo(
        f"{plain(answer.user)} joined team {plain(answer.team)}"
    )


def create_cmd(
    name: Annotated[str, typer.Argument(help="The new team's name.")],
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a team with you as its first member (you are in no team yet)."""
    answer = _client(server, token).create_team(name)
    _print(answer) if as_json else typer.echo(
        f"{plain(answer.user)} created team {plain(answer.team)}"
    )


def leave_cmd(server: ServerOpt = None, token: TokenOpt = None, as_json: JsonOpt = False) -> None:
    """Leave your team while it has no submission (the last member removes it)."""
    answer = _client(server, token).leave_team()
    shown = f"{plain(answer.user)} left team {plain(answer.team)}"
    _print(answer) if as_json else typer.echo(shown)


def flagged_cmd(server: ServerOpt = None, token: TokenOpt = None, as_json: JsonOpt = False) -> None:
    """List the submissions whose worker was lost 3 times (organizers)."""
    answer = _client(server, token).flagged()
    if as_json:
        _print(answer)
        return
    if not answer.flagged:
        typer.echo("no submission is flagged")
    for row in answer.flagged:
        state = "refunded" if row.refunded else "not refunded"
        line = f"{row.submission}  {row.team}  {row.challenge}/{row.phase}  {state}"
        typer.echo(plain(line))


def refund_cmd(
    submission: Annotated[str, typer.Argument(help="Submission id (a flagged one).")],
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Refund a flagged infrastructure failure so it stops counting against the quota.

    The first such failure per team and phase is refunded automatically; later ones wait
    for an organizer (an entry must not buy free reruns by killing its worker).
    """
    answer = _client(server, token).refund(submission)
    _print(answer) if as_json else typer.echo(f"{submission}: refunded")


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``team create|invite|join|leave``, ``flagged`` and ``refund``."""
    del score
    team = typer.Typer(
        help="Teams: create one, invite a user, join with a code, leave.", no_args_is_help=True
    )
    team.command("create")(create_cmd)
    team.command("invite")(invite_cmd)
    team.command("join")(join_cmd)
    team.command("leave")(leave_cmd)
    app.add_typer(team, name="team")
    app.command("flagged")(flagged_cmd)
    app.command("refund")(refund_cmd)
