"""The answers the web layer makes itself (who is asking, the challenge names).

Every other route answers the model its service returns (``services.platform.answers``), so
``/openapi.json``, schemathesis' response checks and the answers cannot drift apart.
"""

from __future__ import annotations

from pydantic import Field

from proctor.services.platform.answers import Answer, TokenInfo


class Me(Answer):
    """The caller: name, role, team, and the token of this request."""

    user: str
    role: str = Field(description="organizer or participant")
    team: str | None
    token: TokenInfo | None = Field(default=None, description="the token of this request")


class ChallengeList(Answer):
    """The installed challenges' names."""

    challenges: list[str]
