"""The data folder an operator command (``user add``, ``token new``) works on, named aloud.

A server reads one data folder; a command writing users or tokens into another one makes the
server answer "the API token is not valid". So these commands never create a folder nobody
named: without ``--data``, ``PROCTOR_DATA`` or ``PROCTOR_DATABASE_URL`` the default
``./proctor-data`` must already hold a database. Each names, on stderr, the folder it used.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import typer

from proctor.errors import UsageError
from proctor.settings import ServiceSettings

DATABASE_FILE = "proctor.sqlite3"


def operator_settings(
    data: Path | None, environ: Mapping[str, str] | None = None
) -> ServiceSettings:
    """The service settings for ``--data`` ``data``; refuses a default folder with no database.

    Raises ``UsageError`` naming the folder it would use and how to choose another.
    """
    env = os.environ if environ is None else environ
    settings = ServiceSettings.from_env(env, data=data)
    if settings.database_url is not None:
        typer.echo("using the database of PROCTOR_DATABASE_URL", err=True)
        return settings
    folder = settings.data.resolve()
    named = data is not None or bool(env.get("PROCTOR_DATA"))
    if not named and not (folder / DATABASE_FILE).exists():
        raise UsageError(
            f"no data folder at {folder} (the default): name the server's data folder "
            "with --data DIR or PROCTOR_DATA=DIR (the folder 'proctor serve --data DIR' "
            "uses), or pass --data ./proctor-data to create a new one here"
        )
    typer.echo(f"using the data folder {folder}", err=True)
    return settings
