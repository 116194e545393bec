"""Registration per challenge: a person registers (accepting the terms) before taking part.

A challenge's ``registration:`` block (``spec.registration``) sets the mode: ``open``
(registered at once), ``approval`` (pending until an organizer approves) or ``invite`` (only
people an organizer invited may register). Accepting records the terms' version, the sha256
of the terms file the person read, and the time. A challenge without the block asks nobody
to register. Organizers take part in every challenge without registering (their test
submissions). :func:`may_participate` is the one rule the faces (submitting, files) ask.
The organizer's side (approve, deny, invite, the list) is ``registration_admin``.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from proctor.errors import ForbiddenError, RefusedError, UsageError
from proctor.services.platform.accounts import Principal
from proctor.services.platform.installs import current
from proctor.services.platform.quota import iso
from proctor.services.platform.registration_answers import RegistrationState, RegistrationStatus
from proctor.services.platform.resources import Platform
from proctor.spec import Challenge
from proctor.store.models import ChallengeInvite, Membership, Registration, User

PENDING, APPROVED, DENIED = "pending", "approved", "denied"
REASONS: dict[str, str] = {
    "anonymous": "sign in, then register for this challenge to take part",
    "none": "register for this challenge (and accept its terms) to take part",
    "uninvited": "this challenge is by invitation: ask its organizers to invite you",
    PENDING: "your registration waits for an organizer's approval",
    DENIED: "an organizer declined your registration",
}


def terms_version(challenge: Challenge) -> str:
    """The sha256 (hex) of the challenge's terms file; "" when it has none."""
    relative = challenge.terms_page
    if relative is None:
        return ""
    try:
        return hashlib.sha256((Path(challenge.root) / relative).read_bytes()).hexdigest()
    except OSError:
        return ""


def _registration(platform: Platform, challenge: str, user_id: int) -> Registration | None:
    with platform.db() as session:
        return session.scalar(
            select(Registration).where(
                Registration.challenge == challenge, Registration.user_id == user_id
            )
        )


def is_invited(platform: Platform, challenge: str, user_id: int) -> bool:
    """True when an organizer invited the user to ``challenge``, by name or by email."""
    with platform.db() as session:
        user = session.get(User, user_id)
        if user is None:
            return False
        # an invitation by email counts once the account has shown it owns that address
        email = user.email if user.email_verified is not None else None
        keys = [user.name, *([email.lower()] if email else [])]
        found = session.scalar(
            select(ChallengeInvite.id).where(
                ChallengeInvite.challenge == challenge, ChallengeInvite.invitee.in_(keys)
            )
        )
    return found is not None


def may_participate(platform: Platform, principal: Principal | None, challenge: Challenge) -> bool:
    """True when ``principal`` may submit to ``challenge`` and download its files.

    Organizers always may; nobody signed in never may; anyone signed in may when the
    challenge asks for no registration; otherwise only an approved registrant.
    """
    if principal is None:
        return False
    if principal.organizer or challenge.registration is None:
        return True
    found = _registration(platform, challenge.name, principal.user_id)
    return found is not None and found.state == APPROVED


def status(platform: Platform, principal: Principal | None, name: str) -> RegistrationStatus:
    """The caller's registration to challenge ``name`` and, when they may not take part, why."""
    _, challenge = current(platform, name)
    spec = challenge.registration
    version = terms_version(challenge)
    base = RegistrationStatus(
        challenge=name,
        required=spec is not None,
        mode=spec.mode if spec else "open",
        state="none",
        may_participate=may_participate(platform, principal, challenge),
        reason="",
        terms_version=version,
        team_size=spec.team_size if spec else None,
    )
    if principal is None:
        return base.model_copy(update={"reason": REASONS["anonymous"]})
    found = _registration(platform, name, principal.user_id)
    invited = spec is None or spec.mode != "invite" or is_invited(platform, name, principal.user_id)
    update: dict[str, object] = {"invited": invited}
    if found is not None:
        state: RegistrationState = found.state  # type: ignore[assignment]
        update |= {
            "state": state,
            "accepted_terms_version": found.terms_version,
            "registered": iso(found.registered),
        }
    if not base.may_participate:
        key = found.state if found is not None else ("none" if invited else "uninvited")
        update["reason"] = REASONS[key]
    return base.model_copy(update=update)


def require_participation(platform: Platform, principal: Principal, challenge: Challenge) -> None:
    """Refuse (``ForbiddenError``, saying why and what to do) a caller who may not take part."""
    if not may_participate(platform, principal, challenge):
        shown = status(platform, principal, challenge.name)
        raise ForbiddenError(f"you cannot submit to {challenge.name!r} yet: {shown.reason}")


def register(
    platform: Platform, principal: Principal, name: str, accepted_terms: str | None
) -> RegistrationStatus:
    """Register the caller to challenge ``name``, accepting the terms of version ``accepted_terms``.

    ``accepted_terms`` must be the current terms' sha256 (the version the person read; a
    challenge without terms takes "" or None). ``open`` mode approves at once, ``approval``
    leaves the registration pending, ``invite`` refuses anyone not invited. The caller's
    team must fit the challenge's ``team_size``.
    """
    _, challenge = current(platform, name)
    spec = challenge.registration
    if spec is None:
        raise UsageError(
            f"challenge {name!r} asks for no registration: everyone signed in takes part"
        )
    if principal.organizer:
        raise UsageError(
            "organizers take part without registering: register a participant's account"
        )
    version = terms_version(challenge)
    if (accepted_terms or "") != version:
        raise RefusedError(
            "the terms changed since you read them, or were not accepted: read them again and "
            "accept the current version"
        )
    if spec.mode == "invite" and not is_invited(platform, name, principal.user_id):
        raise ForbiddenError(REASONS["uninvited"])
    _check_team_fits(platform, principal, spec.team_size)
    state = APPROVED if spec.mode in ("open", "invite") else PENDING
    now = time.time()
    try:
        with platform.db.begin() as session:
            found = session.scalar(
                select(Registration).where(
                    Registration.challenge == name, Registration.user_id == principal.user_id
                )
            )
            if found is not None:
                raise UsageError(f"you registered already ({found.state})")
            session.add(
                Registration(
                    challenge=name,
                    user_id=principal.user_id,
                    state=state,
                    terms_version=version,
                    registered=now,
                )
            )
    except IntegrityError:
        raise UsageError("you registered already") from None
    platform.audit(principal.name, "registration.register", name, f"state={state} terms={version}")
    return status(platform, principal, name)


def _check_team_fits(platform: Platform, principal: Principal, team_size: int | None) -> None:
    """Refuse registering when the caller's team is larger than the challenge allows."""
    if team_size is None or principal.team_id is None:
        return
    with platform.db() as session:
        members = session.scalar(
            select(func.count()).where(Membership.team_id == principal.team_id)
        )
    if (members or 0) > team_size:
        raise RefusedError(
            f"team {principal.team!r} has {members} members; this challenge allows teams of "
            f"{team_size} at most: leave the team or form a smaller one"
        )
