"""Warnings captured by the code that asked for them, not by the whole process.

``warnings.catch_warnings`` swaps process-wide state (the filters and ``showwarning``): two
threads inside it at once take each other's warnings, or lose them to another thread's
``"ignore"``. eHealth-KD scores its three scenarios at once, so a reader's note about one
scenario could land on another. ``warn`` instead hands the warning to the capture that is
open in the current thread (a ``ContextVar``), and falls back to ``warnings.warn`` when none is.

>>> with captured_warnings() as caught:
...     warn("relation dropped", UserWarning)
>>> [str(w) for w in caught]
['relation dropped']
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_capture: ContextVar[list[Warning] | None] = ContextVar("proctor_warning_capture", default=None)


def warn(message: str, category: type[Warning], *, stacklevel: int = 2) -> None:
    """Warn ``message``: into the capture open in this thread, else through ``warnings``."""
    sink = _capture.get()
    if sink is not None:
        sink.append(category(message))
    else:
        warnings.warn(message, category, stacklevel=stacklevel + 1)


@contextmanager
def captured_warnings() -> Iterator[list[Warning]]:
    """Collect what ``warn`` emits in this thread (and this context only) while the block runs.

    Captures nest: the innermost one receives the warnings. Other threads are not affected.
    """
    caught: list[Warning] = []
    token = _capture.set(caught)
    try:
        yield caught
    finally:
        _capture.reset(token)
