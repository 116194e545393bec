"""Request dependencies: the platform of the app, and who is asking (Bearer API token)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from proctor.services.platform.accounts import Principal, authenticate
from proctor.services.platform.resources import Platform

_bearer = HTTPBearer(auto_error=False)


def platform(request: Request) -> Platform:
    """The platform ``create_app`` was given."""
    found: Platform = request.app.state.platform
    return found


PlatformDep = Annotated[Platform, Depends(platform)]
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


def principal(found: PlatformDep, credentials: Credentials) -> Principal:
    """The token's user; 401 without a valid token."""
    return authenticate(found, credentials.credentials if credentials else None)


def maybe_principal(found: PlatformDep, credentials: Credentials) -> Principal | None:
    """The token's user, or None for an anonymous caller (public routes)."""
    return authenticate(found, credentials.credentials) if credentials else None


PrincipalDep = Annotated[Principal, Depends(principal)]
MaybePrincipalDep = Annotated[Principal | None, Depends(maybe_principal)]
