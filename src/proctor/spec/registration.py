"""Who may take part in a challenge: its ``registration:`` block.

::

    registration:
      mode: approval          # open | approval | invite
      terms: pages/terms.md   # Markdown or HTML file of the challenge folder (optional)
      team_size: 3            # most members a team of this challenge may have (optional)

``open``: a signed-in person registers (accepting the terms) and takes part at once;
``approval``: an organizer approves each registration in the console first; ``invite``: only
people an organizer invited may register. A challenge without ``registration:`` asks nobody
to register: everyone signed in takes part, as before registration existed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from proctor.spec.display import check_page_path
from proctor.spec.protocols import LocatedError, Strict

RegistrationMode = Literal["open", "approval", "invite"]
REGISTRATION_MODES: tuple[RegistrationMode, ...] = ("open", "approval", "invite")


class RegistrationSpec(Strict):
    """The challenge's registration: its mode, the terms to accept, the largest team."""

    mode: RegistrationMode = "open"
    terms: str | None = None
    team_size: int | None = Field(default=None, gt=0, strict=True)

    @field_validator("terms")
    @classmethod
    def _terms_in_the_folder(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            check_page_path("terms", value)
        except LocatedError as err:
            raise ValueError(str(err)) from None
        return value
