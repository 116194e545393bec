"""``proctor rescore``: score a phase again with the installed scorer, or preview it first.

Without an option the server previews and applies at once. ``--dry-run`` only computes the
diff and keeps it as a preview (nothing changes); ``--apply ID`` stores that preview's scores
(refused, exit 4, when they no longer hold: a newer bundle, a submission scored since);
``--cancel ID`` drops it. Organizers only: a participant's call exits 5.
"""

from __future__ import annotations

from typing import Annotated

import typer

from proctor.cli.api_client import api_client, print_json
from proctor.cli.untrusted import plain
from proctor.errors import UsageError
from proctor.services.platform.answers import Rescored
from proctor.wording import plural

ServerOpt = Annotated[
    str | None, typer.Option("--server", help="Server URL (PROCTOR_SERVER).", show_default=False)
]
TokenOpt = Annotated[
    str | None, typer.Option("--token", help="API token (PROCTOR_TOKEN).", show_default=False)
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def rescore(  # noqa: PLR0917 - typer maps parameters to options
    challenge: Annotated[str, typer.Argument(help="Challenge name.")],
    phase: Annotated[str | None, typer.Option(help="Phase (default: the last).")] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Only show what would change (kept as a preview; nothing changes)."
        ),
    ] = False,
    apply: Annotated[
        str | None,
        typer.Option(help="Apply the preview ID a --dry-run printed.", show_default=False),
    ] = None,
    cancel: Annotated[
        str | None, typer.Option(help="Drop the preview ID unapplied.", show_default=False)
    ] = None,
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Score a phase's scored submissions again with the installed scorer (organizers).

    Run it after 'proctor challenge add' installed an updated bundle; the old scores are
    kept as a version, and the answer lists every change and the default board's rank moves.
    Submissions whose scoring failed (failure scorer) are scored again too. With --dry-run
    nothing changes: the diff is kept as a preview, applied with --apply ID (refused when a
    submission was scored since, or a newer bundle installed: preview again) or dropped with
    --cancel ID.
    """
    if sum((dry_run, apply is not None, cancel is not None)) > 1:
        raise UsageError("choose one of --dry-run, --apply ID and --cancel ID")
    client = api_client(server, token)
    if cancel is not None:
        dropped = client.rescore_cancel(challenge, cancel)
        _print(dropped) if as_json else typer.echo(f"preview {cancel} dropped; nothing changed")
        return
    if apply is not None:
        answer = client.rescore_apply(challenge, apply)
    else:
        answer = client.rescore(challenge, phase, preview=dry_run)
    if as_json:
        _print(answer)
        return
    _show(answer)


_print = print_json


def _show(answer: Rescored) -> None:
    """The diff as text: a headline, each changed metric, each rank moved."""
    done = "rescored" if answer.applied else "would be rescored (preview, nothing changed)"
    typer.echo(
        f"{answer.challenge} · phase {answer.phase} · version "
        f"{answer.challenge_version}: {plural(answer.rescored, 'job')} {done}, "
        f"{answer.changed} changed"
    )
    for job in answer.jobs:
        where = f"  {job.submission} ({job.team}) {job.task}"
        if job.error:
            typer.echo(plain(f"{where}: {job.error}"))
        for metric, change in job.changes.items():
            typer.echo(plain(f"{where} {metric}: {change.old} -> {change.new}"))
    for move in answer.rank_changes:
        old = move.old.rank if move.old else "-"
        new = move.new.rank if move.new else "-"
        typer.echo(plain(f"  rank of {move.team}: {old} -> {new}"))
    if not answer.applied:
        name, ident = answer.challenge, answer.preview
        typer.echo(
            f"preview {ident}: apply it with 'proctor rescore {name} --apply {ident}', "
            f"or drop it with 'proctor rescore {name} --cancel {ident}'"
        )
