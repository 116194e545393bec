"""Isolation backends: sessions that run commands under namespaces and limits.

``create_sandbox(settings)`` builds the configured backend; ``FakeSandbox`` answers runs with a
test's handler for unit tests of the layers above (no isolation).
"""

from proctor.sandbox.base import (
    CANCELLED,
    GiB,
    KiB,
    Limits,
    MiB,
    Mount,
    Outcome,
    RunSpec,
    Sandbox,
    SandboxSession,
)
from proctor.sandbox.factory import create_sandbox
from proctor.sandbox.fake import FakeRequest, FakeSandbox

__all__ = [
    "CANCELLED",
    "FakeRequest",
    "FakeSandbox",
    "GiB",
    "KiB",
    "Limits",
    "MiB",
    "Mount",
    "Outcome",
    "RunSpec",
    "Sandbox",
    "SandboxSession",
    "create_sandbox",
]
