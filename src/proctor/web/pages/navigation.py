"""The challenge's navigation in the header: its overview, its own pages, its readable boards."""

from __future__ import annotations

from urllib.parse import quote

from proctor.services.platform import overview
from proctor.services.platform.accounts import Principal
from proctor.services.platform.resources import Platform
from proctor.services.platform.vocabulary import Challenge
from proctor.web.pages.bundle_pages import TITLES, page_names


def challenge_nav(
    platform: Platform, principal: Principal | None, challenge: Challenge, here: str
) -> list[tuple[str, str, bool]]:
    """The challenge's navigation: (title, address, current) per page and readable board."""
    base = f"/challenges/{quote(challenge.name)}"
    links = [("Overview", base, here == "overview")]
    links += [
        (TITLES[name], f"{base}/pages/{name}", here == name)
        for name in page_names(challenge)
        if name != "overview"
    ]
    links.append(("Files", f"{base}/files", here == "files"))
    phases = overview.challenge_overview(platform, principal, challenge.name).phases
    several = len(phases) > 1
    for phase in phases:
        for board in phase.boards:
            if not board.readable:
                continue
            title = "Board" if board.name == "default" else f"Board {board.name}"
            title += f" ({phase.name})" if several else ""
            address = f"{base}/leaderboards/{quote(board.name)}?phase={quote(phase.name)}"
            links.append((title, address, here == f"{phase.name}/{board.name}"))
    return links
