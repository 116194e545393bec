"""The service's commands: serve, user, challenge, submit, status, leaderboard, rescore, ...

Every command takes ``--json``. Client commands talk to ``--server`` (``PROCTOR_SERVER``) with
``--token`` (``PROCTOR_TOKEN``); ``serve`` and ``user add`` work on the data folder or database
directly. Exit statuses: 0 ok, 1 entry failed, 2 usage, 3 platform fault, 4 refused (quota,
phase closed), 5 forbidden or not found, 6 server unreachable.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from proctor.cli import challenge_cmd, rescore_cmd
from proctor.cli.api_client import api_client, print_json
from proctor.cli.data_folder import operator_settings
from proctor.cli.figures import shown_number
from proctor.cli.untrusted import plain
from proctor.errors import UsageError
from proctor.services.platform.answers import SubmissionStatus
from proctor.services.platform.client import Client
from proctor.settings import ServiceSettings

# The server's and the store's modules are imported by the commands that use them
# (``serve``, ``user add``): a client command such as ``submit`` starts without them.

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
DataOpt = Annotated[
    Path | None, typer.Option("--data", help="Data folder (PROCTOR_DATA; default ./proctor-data).")
]
ServerOpt = Annotated[
    str | None, typer.Option("--server", help="Server URL (PROCTOR_SERVER).", show_default=False)
]
TokenOpt = Annotated[
    str | None, typer.Option("--token", help="API token (PROCTOR_TOKEN).", show_default=False)
]
POLL_S = 0.5


_client = api_client


_print = print_json


def serve_cmd(  # noqa: PLR0917 - typer maps parameters to options
    data: DataOpt = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: any free one).", min=0)] = 8000,
    workers: Annotated[int, typer.Option(help="Local workers (jobs at once).", min=1)] = 2,
    executor: Annotated[
        str, typer.Option(help="local (embedded workers) or celery (proctor worker processes).")
    ] = "local",
    as_json: JsonOpt = False,
) -> None:
    """Run the Proctor service: the REST API under /api/v1 and local workers; prints the URL.

    With --executor celery, jobs go to the broker (PROCTOR_BROKER_URL) for 'proctor worker'
    processes instead, and --workers is ignored.

    Challenges with 'environment: host' are refused unless PROCTOR_ALLOW_HOST_ENVIRONMENT=1.
    """
    from proctor.services.platform.serving import ServeRequest, serve

    settings = ServiceSettings.from_env(data=data)

    def announce(url: str) -> None:
        typer.echo(json.dumps({"url": url}) if as_json else f"Proctor serving on {url}")
        sys.stdout.flush()
        typer.echo(f"proctor serve: reading {settings.store_words}", err=True)

    serve(settings, ServeRequest(host, port, workers, executor), announce)


def user_add(
    name: Annotated[str, typer.Argument(help="The user's name.")],
    organizer: Annotated[bool, typer.Option(help="Give the organizer role.")] = False,
    team: Annotated[str | None, typer.Option(help="Team to join (created if missing).")] = None,
    data: DataOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add a user directly to the database and print their API token (shown once).

    Name the server's data folder (--data or PROCTOR_DATA): without either, ./proctor-data must
    already exist. The folder used is printed on stderr.
    """
    from proctor.services.platform.accounts import add_user
    from proctor.services.platform.resources import open_platform

    platform = open_platform(operator_settings(data))
    try:
        created = add_user(platform, name, organizer=organizer, team=team)
    finally:
        platform.close()
    if as_json:
        _print(created)
    else:
        typer.echo(f"user {created.user} (team {created.team or '-'}); API token, shown once:")
        typer.echo(created.token)


def challenge_add(
    bundle: Annotated[str, typer.Argument(help="A bundle folder or archive, or a bundled name.")],
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Install or update a challenge on the server (organizers)."""
    answer = _client(server, token).install(bundle)
    if as_json:
        _print(answer)
    else:
        state = "installed" if answer.changed else "unchanged"
        typer.echo(f"{answer.challenge} version {answer.version} {state}")


def submit_cmd(  # noqa: PLR0917 - typer maps parameters to options
    entry: Annotated[
        Path,
        typer.Argument(
            help="The entry: a .zip or .tar.gz archive, a folder (sent packed as .tar.gz), or "
            "the one prediction file the challenge expects, bare (e.g. submission.csv)."
        ),
    ],
    challenge: Annotated[str, typer.Option("--challenge", "-c", help="Challenge name.")],
    phase: Annotated[str | None, typer.Option(help="Phase (default: the open one).")] = None,
    server: ServerOpt = None,
    token: TokenOpt = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Return once queued.")] = False,
    as_json: JsonOpt = False,
    field: Annotated[
        list[str] | None,
        typer.Option(
            "--field",
            help="NAME=VALUE of one of the challenge's submission fields (repeat it).",
        ),
    ] = None,
) -> None:
    """Submit ENTRY and follow its stages until the result (or return at once: --no-wait)."""
    client = _client(server, token)
    receipt = client.submit(entry, challenge, phase, _fields(field or []))
    if no_wait:
        _print(receipt) if as_json else typer.echo(
            f"submission {receipt.submission} queued (position {receipt.queue_position})"
        )
        return
    if not as_json:
        typer.echo(f"submission {receipt.submission} queued", err=True)
    final = _follow(client, receipt.submission, quiet=as_json)
    report = final.report or {}
    if as_json:
        _print({**report, "submission": final.submission, "team": final.team})
    else:
        _show(final)
    raise typer.Exit(_exit_status(final))


def _fields(given: list[str]) -> dict[str, str]:
    """``NAME=VALUE`` options by name; a usage error for one without ``=``."""
    values = {}
    for item in given:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--field {item!r} needs the form NAME=VALUE (--field method=ridge)")
        values[name.strip()] = value
    return values


def _follow(client: Client, sid: str, *, quiet: bool) -> SubmissionStatus:
    """Poll the submission until it finishes, showing each new stage on stderr."""
    shown = None
    while True:
        current = client.status(sid)
        seen = (current.status, current.stage, current.queue_position)
        if seen != shown and not quiet:
            where = current.stage or (
                f"position {current.queue_position}" if current.queue_position is not None else ""
            )
            typer.echo(plain(f"{current.status} {where}".rstrip()), err=True)
            shown = seen
        if current.status not in ("queued", "running"):
            return current
        time.sleep(POLL_S)


def _exit_status(final: SubmissionStatus) -> int:
    if final.status in ("scored", "dry_run"):
        return 0
    if final.status == "cancelled":
        return 130
    return 1 if final.failure in (None, "entry") else 3


def _show(final: SubmissionStatus) -> None:
    report = final.report or {}
    typer.echo(f"submission {final.submission} · team {final.team} · {final.status}")
    for stage in report.get("stages", []):
        typer.echo(plain(f"  {stage['name']:<8} {stage['status']:<8} {stage['message']}"))
    for task, scores in report.get("scores", {}).items():
        shown = ", ".join(f"{k}={shown_number(v)}" for k, v in scores.items())
        typer.echo(f"  scores · {task}: {shown}")


def status_cmd(
    submission: Annotated[str, typer.Argument(help="Submission id.")],
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a submission's status, stage, queue position and (when finished) its report."""
    answer = _client(server, token).status(submission)
    if as_json:
        _print(answer)
    elif answer.status in ("queued", "running"):
        where = answer.stage or f"queue position {answer.queue_position}"
        typer.echo(f"submission {submission} · {answer.status} · {where}")
    else:
        _show(answer)


def leaderboard_cmd(  # noqa: PLR0917 - typer maps parameters to options
    challenge: Annotated[str, typer.Argument(help="Challenge name.")],
    phase: Annotated[
        str | None, typer.Option(help="Phase (default: the open one, else the last closed).")
    ] = None,
    board: Annotated[
        str, typer.Option(help="default, all, or a board the phase declares.")
    ] = "default",
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV.")] = False,
) -> None:
    """Show a leaderboard: public boards need no token, the others an organizer's."""
    client = _client(server, token)
    if as_csv:
        typer.echo(client.leaderboard_csv(challenge, phase, board), nl=False)
        return
    answer = client.leaderboard(challenge, phase, board)
    if as_json:
        _print(answer)
        return
    typer.echo(f"{answer.challenge} · phase {answer.phase} · board {answer.board}")
    for row in answer.rows:
        scores = (f"{t}.{m}={v:.6g}" for t, s in row.scores.items() for m, v in s.items())
        cells = [f"{row.rank:g}", row.team, row.submission, *scores]
        typer.echo(plain("  ".join(str(cell) for cell in cells)))


def publish_cmd(  # noqa: PLR0917 - typer maps parameters to options
    submission: Annotated[str, typer.Argument(help="Submission id.")],
    task: Annotated[str, typer.Argument(help="Task whose result to publish.")],
    part: Annotated[
        str | None,
        typer.Option(help="Only this part of the task (a VISCERAL organ, e.g. liver)."),
    ] = None,
    withdraw: Annotated[bool, typer.Option(help="Withdraw instead of publishing.")] = False,
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Publish (or --withdraw) a submission's result on one task (or one --part of it).

    Published results feed the phase's best_published boards.
    """
    answer = _client(server, token).publish(submission, task, part, not withdraw)
    what = f"{task}/{part}" if part else task
    _print(answer) if as_json else typer.echo(
        f"{submission} {what}: {'published' if answer.published else 'withdrawn'}"
    )


def final_cmd(
    submission: Annotated[str, typer.Argument(help="Submission id.")],
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Choose a scored submission as one of the team's final entries."""
    answer = _client(server, token).final(submission)
    replaced = f" (replaces {answer.replaced})" if answer.replaced else ""
    _print(answer) if as_json else typer.echo(f"{submission} is a final entry{replaced}")


def cancel_cmd(
    submission: Annotated[str, typer.Argument(help="Submission id.")],
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Cancel a queued or running submission."""
    answer = _client(server, token).cancel(submission)
    _print(answer) if as_json else typer.echo(f"{submission}: {answer.status}")


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add the service commands."""
    del score
    app.command("serve")(serve_cmd)
    user = typer.Typer(help="Users of the service.", no_args_is_help=True)
    user.command("add")(user_add)
    app.add_typer(user, name="user")
    challenge = typer.Typer(
        help="Challenges: write one (new), check it (check), install it on a server (add).",
        no_args_is_help=True,
    )
    challenge_cmd.register(challenge)
    challenge.command("add")(challenge_add)
    app.add_typer(challenge, name="challenge")
    app.command("submit")(submit_cmd)
    app.command("status")(status_cmd)
    app.command("leaderboard")(leaderboard_cmd)
    app.command("rescore")(rescore_cmd.rescore)
    app.command("publish")(publish_cmd)
    app.command("final")(final_cmd)
    app.command("cancel")(cancel_cmd)
