"""Process facts the sandbox's clean-up code needs."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True if a process ``pid`` exists (even one we may not signal)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
