"""Server-rendered pages for people, one module per family, assembled into one router.

``session`` (signing in and out), ``participant`` (challenges, boards, submitting, a
submission), ``assets`` (stylesheet, scripts, favicon); ``common`` holds what they share
(templates, rendering, the signed-in user, CSRF-checked forms).
"""

from __future__ import annotations

from fastapi import APIRouter

from proctor.web.pages import assets, participant, session
from proctor.web.pages.common import COOKIE

router = APIRouter(include_in_schema=False)
router.include_router(assets.router)
router.include_router(session.router)
router.include_router(participant.router)

__all__ = ["COOKIE", "router"]
