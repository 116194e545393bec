"""Choose the sandbox backend named by the settings."""

from __future__ import annotations

from proctor.errors import UsageError
from proctor.sandbox.base import Sandbox
from proctor.settings import SANDBOX_BACKENDS, Settings


def create_sandbox(settings: Settings) -> Sandbox:
    """The backend of ``settings.sandbox_backend`` (``PROCTOR_SANDBOX``): bwrap or process.

    Nothing runs yet: the bwrap backend probes the host on its first run (fail closed), the
    process backend refuses every run unless ``allow_unsandboxed`` is set.
    """
    if settings.sandbox_backend == "bwrap":
        from proctor.sandbox.bwrap import BwrapSandbox

        return BwrapSandbox(settings)
    if settings.sandbox_backend == "process":
        from proctor.sandbox.process import ProcessSandbox

        return ProcessSandbox(settings)
    raise UsageError(
        f"PROCTOR_SANDBOX={settings.sandbox_backend!r} is not a sandbox backend; "
        f"choose one of {', '.join(SANDBOX_BACKENDS)}"
    )
