"""The organizer console's commands: submissions, logs, entry, phase, user and team admin.

``submissions``, ``logs``, ``entry``, ``phase``, ``user list|disable``, ``team move|quota``.

Client commands like the other service commands (``--server``/``PROCTOR_SERVER``,
``--token``/``PROCTOR_TOKEN``); organizers only: a participant's call exits 5.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from proctor.cli.api_client import print_json
from proctor.cli.team_cmd import JsonOpt, ServerOpt, TokenOpt, _client
from proctor.cli.untrusted import plain
from proctor.errors import UsageError
from proctor.services.platform.answers import ListedSubmission
from proctor.wording import plural

CsvOpt = Annotated[bool, typer.Option("--csv", help="Print CSV on stdout.")]


_print = print_json


def _scores(row: ListedSubmission) -> str:
    return "; ".join(
        f"{task}.{metric}={value:.6g}" if isinstance(value, float | int) else f"{task}.{metric}="
        for task, metrics in row.scores.items()
        for metric, value in metrics.items()
    )


def submissions_cmd(  # noqa: PLR0917 - typer maps parameters to options
    challenge: Annotated[str, typer.Argument(help="Challenge name.")],
    phase: Annotated[str | None, typer.Option(help="Only this phase.")] = None,
    team: Annotated[str | None, typer.Option(help="Only this team.")] = None,
    status: Annotated[
        str | None, typer.Option(help="queued, running, scored, failed or cancelled.")
    ] = None,
    failure: Annotated[
        str | None, typer.Option(help="entry, platform, scorer or infrastructure.")
    ] = None,
    page: Annotated[int, typer.Option(help="Page (from 1).")] = 1,
    per_page: Annotated[int, typer.Option(help="Submissions per page (at most 500).")] = 100,
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
    as_csv: CsvOpt = False,
) -> None:
    """List every submission of a challenge with its status, failure and scores (organizers)."""
    filters = {
        "phase": phase,
        "team": team,
        "status": status,
        "failure": failure,
        "page": page,
        "per_page": per_page,
    }
    answer = _client(server, token).submissions(challenge, filters)
    if as_json:
        _print(answer)
        return
    rows = answer.submissions
    if as_csv:
        typer.echo(_csv(rows), nl=False)
        return
    for row in rows:
        line = (
            f"{row.submission}  {row.team}  {row.phase}  {row.created}  "
            f"{row.status}{' (' + row.failure + ')' if row.failure else ''}  "
            f"{_scores(row)}"
        )
        typer.echo(plain(line))
    shown = f"page {answer.page}, " if answer.total > answer.per_page else ""
    typer.echo(f"{plural(answer.total, 'submission')} ({shown}{len(rows)} shown)", err=True)


def _csv(rows: list[ListedSubmission]) -> str:
    """One row per submission: its facts, a column per task and metric, then per field.

    A submission field's column is ``field.NAME``; its text is guarded against spreadsheet
    formulas (a leading ``=``, ``+``, ``-``, ``@`` gets a ``'``).
    """
    columns = sorted({f"{t}.{m}" for r in rows for t, ms in r.scores.items() for m in ms})
    named = list(dict.fromkeys(name for row in rows for name in row.fields))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["submission", "team", "phase", "created", "status", "failure", *columns]
        + [f"field.{name}" for name in named]
    )
    for row in rows:
        flat = {f"{t}.{m}": v for t, ms in row.scores.items() for m, v in ms.items()}
        facts = [row.submission, row.team, row.phase, row.created, row.status]
        values = ["" if flat.get(c) is None else flat[c] for c in columns]
        texts = [_as_text(row.fields.get(name, "")) for name in named]
        writer.writerow([*facts, row.failure or "", *values, *texts])
    return out.getvalue()


def _as_text(cell: str) -> str:
    """A cell a spreadsheet shows as text, never as a formula."""
    return f"'{cell}" if cell.startswith(("=", "+", "-", "@", "\t", "\r")) else cell


def logs_cmd(
    submission: Annotated[str, typer.Argument(help="Submission id.")],
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print a submission's organizer logs: each task's image, reason, logs, failing cases."""
    answer = _client(server, token).logs(submission)
    if as_json:
        _print(answer)
        return
    for task in answer.tasks:
        typer.echo(plain(f"== task {task.task}: {task.state} ({task.status})"))
        if task.image is not None:
            typer.echo(plain(task.image.line()))
        why = task.reason
        if why is not None:
            stage = f" in the {why.stage} stage" if why.stage else ""
            typer.echo(plain(f"{why.failure or 'failed'} failure{stage}; owner: {why.owner}"))
            typer.echo(plain(f"reason (from {why.source}):"))
            typer.echo(plain("\n".join(why.lines)))
        for name, text in {**task.logs, **task.diagnostics}.items():
            typer.echo(plain(f"--- {name}"))
            typer.echo(plain(text))
        if task.cap:
            typer.echo(plain(f"(kept: {task.cap})"))


def entry_cmd(
    submission: Annotated[str, typer.Argument(help="Submission id.")],
    dest: Annotated[Path, typer.Argument(help="File to write the entry archive to.")],
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Download a submission's entry archive, byte for byte as uploaded (organizers)."""
    if dest.is_dir():
        raise UsageError(f"{dest} is a folder: name the file to write the archive to")
    written = _client(server, token).entry(submission, dest)
    answer = {"submission": submission, "path": str(dest), "bytes": written}
    _print(answer) if as_json else typer.echo(f"{submission}: {written} bytes written to {dest}")


def _when(text: str | None, option: str) -> str | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"{option} {text!r} is not ISO 8601: write 2025-03-01T12:00:00+00:00"
        ) from None
    if moment.utcoffset() is None:
        raise UsageError(f"{option} {text!r} has no time zone: write 2025-03-01T12:00:00+00:00")
    return moment.isoformat()


def phase_cmd(  # noqa: PLR0917 - typer maps parameters to options
    challenge: Annotated[str, typer.Argument(help="Challenge name.")],
    phase: Annotated[str, typer.Argument(help="Phase name.")],
    opens: Annotated[str | None, typer.Option(help="New opening time (ISO 8601, zone).")] = None,
    closes: Annotated[str | None, typer.Option(help="New closing time (ISO 8601, zone).")] = None,
    no_opens: Annotated[bool, typer.Option("--no-opens", help="Remove the opening time.")] = False,
    no_closes: Annotated[
        bool, typer.Option("--no-closes", help="Remove the closing time.")
    ] = False,
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Change a phase's opening or closing time without reinstalling (organizers, audited)."""
    clear = [name for name, on in (("opens", no_opens), ("closes", no_closes)) if on]
    body = {"opens": _when(opens, "--opens"), "closes": _when(closes, "--closes"), "clear": clear}
    answer = _client(server, token).phase_times(challenge, phase, body)
    if as_json:
        _print(answer)
    else:
        typer.echo(
            plain(
                f"{answer.challenge}/{answer.phase}: opens {answer.opens or 'always'}, "
                f"closes {answer.closes or 'never'}"
            )
        )


def user_list(server: ServerOpt = None, token: TokenOpt = None, as_json: JsonOpt = False) -> None:
    """List every user with role, team and state: active, disabled, unconfirmed, pending."""
    answer = _client(server, token).users()
    if as_json:
        _print(answer)
        return
    for user in answer.users:
        typer.echo(plain(f"{user.user}  {user.role}  {user.team or '-'}  {user.state}"))


def user_disable(
    name: Annotated[str, typer.Argument(help="The user.")],
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Disable a user: every token of theirs is refused from now on (organizers)."""
    answer = _client(server, token).disable_user(name)
    _print(answer) if as_json else typer.echo(plain(f"user {name} disabled"))


def team_move(
    user: Annotated[str, typer.Argument(help="The participant.")],
    team: Annotated[str, typer.Argument(help="The team to move them into (created if missing).")],
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Move a participant into another team (organizers)."""
    answer = _client(server, token).move_member(user, team)
    _print(answer) if as_json else typer.echo(
        plain(f"{user}: {answer.previous or 'no team'} -> {answer.team}")
    )


def team_quota(  # noqa: PLR0917 - typer maps parameters to options
    team: Annotated[str, typer.Argument(help="The team.")],
    per_day: Annotated[int | None, typer.Option(help="Submissions in any 24 hours.")] = None,
    every_days: Annotated[float | None, typer.Option(help="One submission per N days.")] = None,
    total: Annotated[int | None, typer.Option(help="Submissions over the phase.")] = None,
    concurrent: Annotated[int | None, typer.Option(help="Queued or running at once.")] = None,
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Override a team's quota (each limit given replaces the phase's); none: remove it."""
    limits = {
        "per_day": per_day,
        "every_days": every_days,
        "total": total,
        "concurrent": concurrent,
    }
    answer = _client(server, token).team_quota(team, limits)
    quota = answer.quota.model_dump() if answer.quota is not None else None
    _print(answer) if as_json else typer.echo(plain(f"team {team}: quota {quota}"))


def _group(app: typer.Typer, name: str) -> typer.Typer:
    """The command group ``name`` another module registered (``user``, ``team``)."""
    for info in app.registered_groups:
        if info.name == name and info.typer_instance is not None:
            return info.typer_instance
    raise LookupError(f"register the {name!r} group before the console's commands")


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add the console's commands, ``user list|disable`` and ``team move|quota``.

    Registered after ``service_cmd`` and ``team_cmd``, whose ``user`` and ``team`` groups
    it extends.
    """
    del score
    user, team = _group(app, "user"), _group(app, "team")
    app.command("submissions")(submissions_cmd)
    app.command("logs")(logs_cmd)
    app.command("entry")(entry_cmd)
    app.command("phase")(phase_cmd)
    user.command("list")(user_list)
    user.command("disable")(user_disable)
    team.command("move")(team_move)
    team.command("quota")(team_quota)
