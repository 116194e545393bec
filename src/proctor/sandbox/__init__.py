"""Isolation backends: sessions that run commands under namespaces and limits.

``create_sandbox(settings)`` builds the configured backend.
"""

from proctor.sandbox.base import (
    CANCELLED,
    GiB,
    KiB,
    Limits,
    MiB,
    Mount,
    Outcome,
    Sandbox,
    SandboxSession,
)
from proctor.sandbox.factory import create_sandbox

__all__ = [
    "CANCELLED",
    "GiB",
    "KiB",
    "Limits",
    "MiB",
    "Mount",
    "Outcome",
    "Sandbox",
    "SandboxSession",
    "create_sandbox",
]
