"""Server-rendered pages for people, one module per family, assembled into one router.

``session`` (signing in and out), ``participant`` (challenges, their own pages, boards,
submitting), ``submission`` (a submission's page, its live status, its forms), ``assets``
(stylesheet, script, favicon); ``common`` holds what they share (templates, rendering, the
signed-in user, CSRF-checked forms). ``figures`` words numbers and outcomes, ``charts``
chooses each page's plots and ``plots`` draws them as SVG; ``bundle_pages`` renders a
challenge's own Markdown or HTML pages, sanitized.
"""

from __future__ import annotations

from fastapi import APIRouter

from proctor.web.pages import assets, participant, session, submission
from proctor.web.pages.common import COOKIE

router = APIRouter(include_in_schema=False)
router.include_router(assets.router)
router.include_router(session.router)
router.include_router(participant.router)
router.include_router(submission.router)

__all__ = ["COOKIE", "router"]
