"""The app uvicorn loads by name when ``proctor serve`` runs (``proctor.web.server:app``)."""

from __future__ import annotations

from fastapi import FastAPI

from proctor.services.platform.serving import served_platform
from proctor.web.app import create_app


def app() -> FastAPI:
    """The REST app on the platform being served."""
    return create_app(served_platform())
