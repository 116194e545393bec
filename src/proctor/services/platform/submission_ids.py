"""A submission named by its full id or by any unique prefix of at least eight characters.

Ids are 16 hexadecimal characters; people copy the first few from a page or a terminal.
Every service that takes a submission id resolves it here first, among the submissions the
caller may see (a participant: their team's; an organizer: all), so a prefix never tells a
participant that another team's submission exists.
"""

from __future__ import annotations

from sqlalchemy import select

from proctor.errors import NotFoundError, UsageError
from proctor.services.platform.accounts import Principal
from proctor.services.platform.resources import Platform
from proctor.store.models import SubmissionRow

MIN_PREFIX = 8
"""The fewest characters of an id that name a submission."""
MAX_MATCHES = 50
"""Matches counted at most for an ambiguous prefix (the count says "at least")."""


def full_id(platform: Platform, principal: Principal | None, given: str) -> str:
    """The full id of the caller's submission named by ``given`` (the id or a prefix of it).

    Raises ``NotFoundError`` when none of the caller's submissions matches, ``UsageError``
    when ``given`` is shorter than ``MIN_PREFIX`` or matches several (with their count).
    """
    query = select(SubmissionRow.id)
    if principal is not None and not principal.organizer:
        query = query.where(SubmissionRow.team_id == principal.team_id)
    with platform.db() as session:
        if principal is not None and session.scalar(query.where(SubmissionRow.id == given)):
            return given
        if len(given) < MIN_PREFIX:
            if session.scalar(select(SubmissionRow.id).where(SubmissionRow.id == given)):
                raise NotFoundError(f"no submission {given!r}")  # a full id, not the caller's
            raise UsageError(
                f"submission id {given!r} is too short: give its full id or at least "
                f"{MIN_PREFIX} of its first characters"
            )
        if principal is None:
            raise NotFoundError(f"no submission {given!r}")
        prefixed = query.where(SubmissionRow.id.startswith(given, autoescape=True))
        found = list(session.scalars(prefixed.limit(MAX_MATCHES + 1)))
    if not found:
        raise NotFoundError(f"no submission {given!r}")
    if len(found) > 1:
        count = f"more than {MAX_MATCHES}" if len(found) > MAX_MATCHES else str(len(found))
        raise UsageError(
            f"{count} submissions start with {given!r}: give more characters of the id"
        )
    return found[0]
