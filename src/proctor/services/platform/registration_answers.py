"""The answers of the registration services (``registrations``, ``registration_admin``).

Frozen pydantic models like ``answers``; kept apart as one concept: who takes part in which
challenge. Times are ISO 8601 in UTC.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from proctor.services.platform.answers import Answer

RegistrationState = Literal["none", "pending", "approved", "denied"]


class RegistrationStatus(Answer):
    """Where the caller stands with a challenge's registration, and what the page says why.

    ``required``: the challenge asks people to register (it has a ``registration:`` block);
    ``may_participate``: the caller may submit (and download files); ``reason``: why not,
    in words for the page ("" when they may); ``invited``: in ``invite`` mode, whether an
    organizer invited the caller.
    """

    challenge: str
    required: bool
    mode: str
    state: RegistrationState
    may_participate: bool
    reason: str
    terms_version: str = Field(description="sha256 of the current terms file; '' for none")
    accepted_terms_version: str = ""
    registered: str | None = None
    team_size: int | None = None
    invited: bool = True


class RegistrationRow(Answer):
    """One registration as the console lists it."""

    user: str
    email: str = ""
    team: str | None
    state: RegistrationState
    registered: str
    terms_version: str
    decided: str | None
    decided_by: str | None
    submissions: int


class RegistrationList(Answer):
    """A challenge's registrations (pending first, then by time) and the number pending."""

    challenge: str
    mode: str
    pending: int
    registrations: list[RegistrationRow]
    invited: list[str]


class Decision(Answer):
    """An organizer's decision on a registration; ``notify``: the person to tell (by email).

    ``notify`` is the user name whose address the mailer looks up; the coordinator hooks the
    approval notice on ``registration_admin.decide``'s answer.
    """

    challenge: str
    user: str
    state: RegistrationState
    notify: str


class Invited(Answer):
    """The people now invited to an ``invite``-mode challenge (user names or emails)."""

    challenge: str
    invited: list[str]
