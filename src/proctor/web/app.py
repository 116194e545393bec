"""The FastAPI application: built from a platform (no work at import time)."""

from __future__ import annotations

from fastapi import FastAPI

from proctor.services.platform.resources import Platform
from proctor.web import (
    console_routes,
    file_routes,
    pages,
    refund_routes,
    registration_routes,
    team_routes,
    token_routes,
)
from proctor.web.errors import install_handlers
from proctor.web.routes import router
from proctor.web.security import SecurityHeaders


def create_app(platform: Platform) -> FastAPI:
    """The REST API under ``/api/v1`` (OpenAPI at ``/openapi.json``) and the pages for people.

    Every answer carries the security headers of ``web.security``.
    """
    app = FastAPI(title="Proctor", version="1", openapi_url="/openapi.json")
    app.state.platform = platform
    install_handlers(app)
    app.include_router(router)
    app.include_router(team_routes.router)
    app.include_router(registration_routes.router)
    app.include_router(refund_routes.router)
    app.include_router(token_routes.router)
    app.include_router(file_routes.router)
    app.include_router(console_routes.router)
    app.include_router(pages.router)
    app.add_middleware(SecurityHeaders, trust_proxy=platform.settings.trust_proxy)
    return app
