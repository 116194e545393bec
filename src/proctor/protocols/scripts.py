r"""Why an entry's script could not start, in words a participant can act on.

When the sandbox cannot execute a script (``execvp … No such file or directory`` although the
file is there), the cause is nearly always its first line: Windows (CRLF) line endings make the
interpreter ``/bin/sh\r``, or the ``#!`` line names an interpreter the sandbox does not have.
The script is read by trusted host code without following links, 256 bytes at most.
"""

from __future__ import annotations

import os
from pathlib import Path

from proctor.sandbox.base import Outcome

HEAD_BYTES = 256


def _first_line(home: Path, script: str) -> bytes | None:
    try:
        fd = os.open(home / script, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, HEAD_BYTES).split(b"\n", 1)[0]
    except OSError:
        return None
    finally:
        os.close(fd)


def launch_problem(home: Path, script: str, outcome: Outcome) -> str | None:
    """What kept ``script`` from starting, or None when it started (and failed on its own)."""
    if outcome.exit_status != 1 or "execvp" not in outcome.stderr:
        return None
    line = _first_line(home, script)
    if line is None:
        return None
    if line.endswith(b"\r"):
        return (
            f"{script} has Windows (CRLF) line endings, so its interpreter cannot be found: "
            "convert it to Unix line endings (dos2unix, or your editor's LF setting)"
        )
    if line.startswith(b"#!"):
        interpreter = line[2:].strip().split(b" ")[0].decode("utf-8", "replace")
        return (
            f"{script} asks for the interpreter {interpreter}, which does not exist in the "
            "sandbox: use one the challenge's environment has (e.g. #!/bin/sh, "
            "#!/usr/bin/env python3)"
        )
    return (
        f"{script} cannot be executed: start it with a #! line (e.g. #!/bin/sh) or ship a "
        "program built for this machine"
    )


def duration(seconds: float) -> str:
    """``5 minutes`` for whole minutes, else ``12.5 seconds`` / ``1 second``."""
    if seconds >= 60 and seconds % 60 == 0:
        whole = int(seconds // 60)
        return f"{whole} minute{'s' if whole != 1 else ''}"
    return f"{seconds:g} second{'s' if seconds != 1 else ''}"
