"""Isolation backends: run one command under namespaces and limits, report an ``Outcome``."""

from proctor.sandbox.base import GiB, KiB, Limits, MiB, Mount, Outcome, Sandbox
from proctor.sandbox.factory import create_sandbox

__all__ = ["GiB", "KiB", "Limits", "MiB", "Mount", "Outcome", "Sandbox", "create_sandbox"]
