"""The API client a service command talks through.

A command makes a few requests and ends: its client keeps no connection open between them,
so nothing is left open when the command returns (even when it is run in-process).
"""

from __future__ import annotations

import json
from typing import Any

import typer
from pydantic import BaseModel

from proctor.services.platform.client import Client
from proctor.settings import ServiceSettings


def api_client(server: str | None, token: str | None) -> Client:
    """A client of ``server`` with ``token`` (else PROCTOR_SERVER / PROCTOR_TOKEN)."""
    settings = ServiceSettings.from_env()
    return Client(server or settings.server, token or settings.token, keep_alive=False)


def print_json(answer: BaseModel | Any) -> None:
    """Print ``answer`` (a service's answer, or plain JSON data) as one indented JSON object."""
    data = answer.model_dump(mode="json") if isinstance(answer, BaseModel) else answer
    typer.echo(json.dumps(data, indent=2))
