"""The answers of the Files routes: a challenge's files, each with its size, sha256 and URL.

A module of its own so the CLI's client reads them without the server's modules.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Kind = Literal["data", "kit", "environment", "other"]


class ChallengeFile(BaseModel):
    """One downloadable file of a challenge (the listing's row)."""

    name: str = Field(description="The file's name, unique in the challenge.")
    phase: str | None = Field(description="The phase it belongs to; null: the whole challenge.")
    kind: Kind
    size: int = Field(description="Bytes.")
    sha256: str
    url: str = Field(description="Where to download it (GET; Range and ETag honoured).")
    title: str = ""


class FileListing(BaseModel):
    """The files of a challenge."""

    challenge: str
    version: int
    files: list[ChallengeFile]
