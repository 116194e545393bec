"""The answers of the REST routes as typed models: what ``/openapi.json`` documents.

Routes still build plain mappings in the services; FastAPI validates each answer against its
model here, so the schema, schemathesis' response checks and the answers cannot drift apart.
Models allow extra keys (a newer server may add fields; clients ignore what they do not
know). Nested parts whose shape belongs to another layer (a submission's report, a rescore's
per-job changes) are documented as objects.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from proctor.services.platform.answers import TokenInfo


class Answer(BaseModel):
    """Every answer: extra keys pass through unchanged."""

    model_config = ConfigDict(extra="allow")


class Me(Answer):
    user: str
    role: str = Field(description="organizer or participant")
    team: str | None
    token: TokenInfo | None = Field(default=None, description="the token of this request")


class ChallengeList(Answer):
    challenges: list[str]


class Installed(Answer):
    challenge: str
    version: int = Field(description="1 for the first install; +1 for each changed bundle.")
    sha256: str
    phases: list[str]
    changed: bool = Field(description="False when the same bundle was installed already.")
