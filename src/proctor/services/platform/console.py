"""The organizer console's one rule: organizers only, and nobody else learns it exists.

Every console use case starts with ``organizers_only``: a participant (of any team, the
submission's own included) gets the same "not found" as for a thing that does not exist, so
the console's routes and pages answer 404 to them; without a token the faces answer 401.
"""

from __future__ import annotations

from proctor.errors import NotFoundError
from proctor.services.platform.accounts import Principal

NOT_FOUND = "not found"


def organizers_only(principal: Principal | None) -> Principal:
    """The principal when an organizer; ``NotFoundError`` for anyone else."""
    if principal is None or not principal.organizer:
        raise NotFoundError(NOT_FOUND)
    return principal
