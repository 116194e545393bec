"""Server-rendered pages for people, one module per family, assembled into one router.

``session`` (signing in and out), ``signup`` (making an account, confirming its email, resetting
a password), ``account`` (a person's API tokens and mail switch), ``participant`` (challenges,
their own pages, boards, submitting), ``files`` (a challenge's Files page and its downloads),
``submission`` (a submission's page, its live status, its forms), ``scorer_page`` (a scorer's
page of a submission, sandboxed, which those pages frame), ``assets`` (stylesheet, script,
favicon); the organizer console: ``console`` (its lists, flagged, bundle upload),
``console_record`` (a submission's full record, its entry), ``console_rescore`` (a rescore's
preview, applied or cancelled), ``console_admin`` (phase dates, users and teams),
``console_accounts`` (accounts waiting for approval), ``console_registrations`` (approve or
deny registrations, invite, the participants CSV); ``registration`` (the terms accepted to take
part) and ``team`` (a participant's team: create, invite by link, join, leave). ``common``
holds what they share (one set of templates, rendering, the signed-in user and their role,
CSRF-checked forms). ``figures`` words numbers and outcomes, ``charts`` chooses each page's
plots and ``plots`` draws them as SVG; ``bundle_pages`` renders a challenge's own Markdown or
HTML pages, sanitized.
"""

from __future__ import annotations

from fastapi import APIRouter

from proctor.web.pages import (
    account,
    assets,
    console,
    console_accounts,
    console_admin,
    console_record,
    console_registrations,
    console_rescore,
    files,
    participant,
    registration,
    scorer_page,
    session,
    signup,
    submission,
    team,
)
from proctor.web.pages.common import COOKIE

router = APIRouter(include_in_schema=False)
router.include_router(assets.router)
router.include_router(session.router)
router.include_router(signup.router)
router.include_router(account.router)
router.include_router(participant.router)
router.include_router(files.router)
router.include_router(submission.router)
router.include_router(scorer_page.router)
router.include_router(console.router)
router.include_router(console_record.router)
router.include_router(console_admin.router)
router.include_router(console_rescore.router)
router.include_router(console_accounts.router)
router.include_router(console_registrations.router)
router.include_router(registration.router)
router.include_router(team.router)

__all__ = ["COOKIE", "router"]
