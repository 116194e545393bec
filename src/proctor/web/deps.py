"""Request dependencies: the platform of the app, and who is asking (Bearer API token)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from proctor.services.platform.accounts import Principal, UnknownTokenError, authenticate
from proctor.services.platform.resources import Platform
from proctor.web.token_refusals import refusal

_bearer = HTTPBearer(auto_error=False)


def platform(request: Request) -> Platform:
    """The platform ``create_app`` was given."""
    found: Platform = request.app.state.platform
    return found


PlatformDep = Annotated[Platform, Depends(platform)]
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


def _authenticate(found: Platform, token: str | None, request: Request) -> Principal:
    """``authenticate``; an unknown token's 401 names the store (``token_refusals``)."""
    try:
        return authenticate(found, token)
    except UnknownTokenError as error:
        raise UnknownTokenError(refusal(error, request, found.settings)) from None


def principal(found: PlatformDep, credentials: Credentials, request: Request) -> Principal:
    """The token's user; 401 without a valid token."""
    return _authenticate(found, credentials.credentials if credentials else None, request)


def maybe_principal(
    found: PlatformDep, credentials: Credentials, request: Request
) -> Principal | None:
    """The token's user, or None for an anonymous caller (public routes)."""
    return _authenticate(found, credentials.credentials, request) if credentials else None


PrincipalDep = Annotated[Principal, Depends(principal)]
MaybePrincipalDep = Annotated[Principal | None, Depends(maybe_principal)]
