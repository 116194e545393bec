"""Organizer routes for infrastructure failures: the flagged submissions and their refund."""

from __future__ import annotations

from fastapi import APIRouter

from proctor.services.platform import answers, refunds
from proctor.web.deps import PlatformDep, PrincipalDep
from proctor.web.errors import ERROR_RESPONSES

router = APIRouter(prefix="/api/v1", responses=ERROR_RESPONSES)


@router.get("/flagged")
def flagged(platform: PlatformDep, principal: PrincipalDep) -> answers.FlaggedList:
    """Submissions whose worker was lost 3 times, and whether each was refunded (organizers)."""
    return refunds.flagged(platform, principal)


@router.post("/submissions/{sid}/refund")
def refund(sid: str, platform: PlatformDep, principal: PrincipalDep) -> answers.Flagged:
    """Refund a flagged submission: it stops counting against its team's quota (organizers)."""
    return refunds.refund(platform, principal, sid)
