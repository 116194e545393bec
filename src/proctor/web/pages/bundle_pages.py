"""A challenge's own pages (overview, data, evaluation, terms) from its bundle, sanitized.

``pages:`` in ``challenge.yaml`` names a Markdown or HTML file of the bundle per page
(``spec.display``); imported Codabench or EvalAI bundles bring HTML. Markdown is rendered by
markdown-it (CommonMark, raw HTML allowed), then everything goes through nh3 (ammonia): no
script, style, frame, form, event handler or ``javascript:`` link survives, and images are
dropped (the Content-Security-Policy loads nothing from elsewhere, so they could not show).
"""

from __future__ import annotations

from pathlib import Path

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

from proctor.errors import NotFoundError
from proctor.services.platform.vocabulary import PAGE_NAMES, Challenge

MAX_PAGE_BYTES = 1024 * 1024
TAGS = (nh3.ALLOWED_TAGS - {"img"}) | {"details", "summary"}
TITLES = {"overview": "Overview", "data": "Data", "evaluation": "Evaluation", "terms": "Terms"}

_markdown = MarkdownIt("commonmark", {"html": True}).enable("table")


def page_names(challenge: Challenge) -> list[str]:
    """The pages the challenge declares, in the usual order."""
    return [
        name
        for name in PAGE_NAMES
        if name in challenge.pages or (name == "terms" and challenge.terms_page is not None)
    ]


def sanitized(text: str, markdown: bool) -> Markup:
    """``text`` (Markdown or HTML) as safe HTML."""
    html = _markdown.render(text) if markdown else text
    return Markup(nh3.clean(html, tags=TAGS))  # noqa: S704 (nh3 just sanitized it)


def render_page(challenge: Challenge, name: str) -> Markup:
    """Page ``name`` of the challenge as safe HTML; NotFoundError naming the pages it has."""
    relative = challenge.terms_page if name == "terms" else challenge.pages.get(name)  # type: ignore[call-overload]
    if relative is None:
        have = ", ".join(page_names(challenge)) or "none"
        raise NotFoundError(f"challenge {challenge.name!r} has no page {name!r} (pages: {have})")
    path = Path(challenge.root) / relative
    try:
        raw = path.read_bytes()[:MAX_PAGE_BYTES]
    except OSError as error:
        raise NotFoundError(
            f"page {name!r} of challenge {challenge.name!r}: {relative} is missing from the "
            f"installed bundle ({error.strerror}): add it and install the bundle again"
        ) from None
    markdown = path.suffix.lower() in (".md", ".markdown")
    return sanitized(raw.decode("utf-8", errors="replace"), markdown)
