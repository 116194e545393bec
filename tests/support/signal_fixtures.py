"""Every test leaves the test process's signal dispositions as it found them.

A ``SIG_IGN`` left on SIGINT by one test is inherited by every process a later test starts
(an ignored signal stays ignored across ``exec``): a ``proctor run`` started then ignores
Ctrl-C, and the test of Ctrl-C fails far from the cause. This guard names the test that
changed a disposition, and puts the disposition back.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

WATCHED = (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGHUP, signal.SIGPIPE)


@pytest.fixture(autouse=True)
def _signal_dispositions_kept() -> Iterator[None]:
    before = {sig: signal.getsignal(sig) for sig in WATCHED}
    yield
    changed = {sig: now for sig in WATCHED if (now := signal.getsignal(sig)) != before[sig]}
    for sig in changed:
        kept = before[sig]
        if kept is not None:  # None: set outside Python, which Python cannot set back
            signal.signal(sig, kept)
    assert not changed, {signal.Signals(sig).name: str(now) for sig, now in changed.items()}
