"""``proctor files``: list a served challenge's files, or download them (sha256 checked)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from proctor.cli.api_client import api_client, print_json
from proctor.services.platform.file_answers import ChallengeFile
from proctor.services.platform.file_downloads import fetch_files

ServerOpt = Annotated[
    str | None, typer.Option("--server", help="Server URL (PROCTOR_SERVER).", show_default=False)
]
TokenOpt = Annotated[
    str | None, typer.Option("--token", help="API token (PROCTOR_TOKEN).", show_default=False)
]


def files(  # noqa: PLR0917 - typer maps parameters to options
    name: Annotated[str, typer.Argument(help="The challenge.")],
    download: Annotated[
        Path | None,
        typer.Option(
            "--download",
            help="Download the files into this folder (resumes partial ones; checks each sha256).",
            show_default=False,
        ),
    ] = None,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--file", help="With --download: only this file (repeatable).", show_default=False
        ),
    ] = None,
    server: ServerOpt = None,
    token: TokenOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object on stdout.")
    ] = False,
) -> None:
    """List a challenge's files (public data, starting kit, environment images) or download them."""
    client = api_client(server, token)
    try:
        if download is None:
            listing = client.files(name)
            if as_json:
                print_json(listing)
                return
            _table(listing.files)
            return
        fetched = fetch_files(client, name, download, tuple(only or ()))
    finally:
        client.close()
    if as_json:
        print_json({"files": [{"path": str(f.path), **f.file.model_dump()} for f in fetched]})
        return
    for item in fetched:
        typer.echo(f"wrote {item.path} ({item.file.size} bytes, sha256 checked)")


def _table(rows: list[ChallengeFile]) -> None:
    table = Table(title="files")
    for column in ("name", "kind", "phase", "bytes", "sha256"):
        table.add_column(column, justify="right" if column == "bytes" else "left")
    for row in rows:
        table.add_row(row.name, row.kind, row.phase or "", str(row.size), row.sha256[:16])
    Console().print(table)


def register(app: typer.Typer, score: typer.Typer) -> None:
    """Add ``proctor files``."""
    del score
    app.command("files")(files)
