"""What the web pages show of challenges: their phases, whether each is open, their boards.

The same rules as the REST routes: a board is listed as readable when the caller may read it
(``standings.may_read``); a challenge's hidden inputs and references are never described.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from proctor.services.platform.accounts import Principal
from proctor.services.platform.installs import current, installed_names
from proctor.services.platform.resources import Platform
from proctor.services.platform.standings import may_read
from proctor.spec import Challenge, Phase
from proctor.spec.leaderboards import phase_boards


@dataclass(frozen=True, slots=True)
class ChallengeSummary:
    """An installed challenge: name, title, the names of its phases open now.

    ``opens_next``: when the next phase to open opens (``YYYY-MM-DD HH:MM UTC``), or None.
    """

    name: str
    title: str
    open_phases: list[str]
    opens_next: str | None = None


@dataclass(frozen=True, slots=True)
class BoardLink:
    """A board of a phase, and whether the caller may read it."""

    name: str
    readable: bool


@dataclass(frozen=True, slots=True)
class PhaseView:
    """A phase: its tasks, times (``YYYY-MM-DD HH:MM UTC``), whether open now, its boards.

    ``state``: ``open``, ``upcoming`` (it opens later: "opens at ...") or ``closed``.
    """

    name: str
    title: str
    tasks: list[str]
    opens: str | None
    closes: str | None
    open: bool
    boards: list[BoardLink]
    state: str = "open"


@dataclass(frozen=True, slots=True)
class ChallengeOverview:
    """A challenge: title, description, protocol, and its phases."""

    name: str
    title: str
    description: str
    protocol: str
    phases: list[PhaseView]

    @property
    def open_phases(self) -> list[PhaseView]:
        """The phases taking submissions now."""
        return [phase for phase in self.phases if phase.open]

    @property
    def next_opening(self) -> PhaseView | None:
        """The phase that opens next (None when none is still to open)."""
        upcoming = [phase for phase in self.phases if phase.state == "upcoming"]
        return min(upcoming, key=lambda phase: phase.opens or "", default=None)


def _moment(value: datetime | None) -> str | None:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if value is not None else None


def challenge_list(platform: Platform) -> list[ChallengeSummary]:
    """Every installed challenge: name, title, and the names of its phases open now."""
    now = datetime.now(UTC)
    listed = []
    for name in installed_names(platform):
        _, challenge = current(platform, name)
        open_now = [phase.name for phase in challenge.phases if phase.is_open(now)]
        later = [p.opens for p in challenge.phases if p.opens is not None and now < p.opens]
        listed.append(
            ChallengeSummary(
                name=name,
                title=challenge.title,
                open_phases=open_now,
                opens_next=_moment(min(later)) if later else None,
            )
        )
    return listed


def challenge_overview(
    platform: Platform, principal: Principal | None, name: str
) -> ChallengeOverview:
    """One challenge: title, description, protocol, and per phase its times and boards."""
    _, challenge = current(platform, name)
    return ChallengeOverview(
        name=challenge.name,
        title=challenge.title,
        description=challenge.description,
        protocol=challenge.protocol.kind,
        phases=_phases(challenge, principal),
    )


def _state(phase: Phase, now: datetime) -> str:
    """``open``, ``upcoming`` (opens later) or ``closed`` at ``now``."""
    if phase.is_open(now):
        return "open"
    return "upcoming" if phase.opens is not None and now < phase.opens else "closed"


def _phases(challenge: Challenge, principal: Principal | None) -> list[PhaseView]:
    now = datetime.now(UTC)
    organizer = principal is not None and principal.organizer
    shown = []
    for phase in challenge.phases:
        boards = [
            BoardLink(name=board.name, readable=organizer or may_read(challenge, phase, board))
            for board in phase_boards(challenge, phase.name)
        ]
        shown.append(
            PhaseView(
                name=phase.name,
                title=phase.title,
                tasks=list(phase.tasks),
                opens=_moment(phase.opens),
                closes=_moment(phase.closes),
                open=phase.is_open(now),
                boards=boards,
                state=_state(phase, now),
            )
        )
    return shown
