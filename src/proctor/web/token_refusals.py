"""The 401 for an API token the server does not hold names the store the server reads.

The usual cause is a token made with ``proctor user add --data A`` while the server reads
folder B. The folder is a server path: the answer names it only to a caller on this machine
(a loopback client address, and no proxy's forwarding header: a proxy on this host would make
every caller look local); anyone else is told it is in the server's log, which gets it at
startup (``proctor serve``) and with such a refusal, at most once per ``LOG_EVERY_S``.
"""

from __future__ import annotations

import logging
import threading
import time

from fastapi import Request

from proctor.services.platform.accounts import UnknownTokenError
from proctor.settings import ServiceSettings

log = logging.getLogger(__name__)
LOOPBACK = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})
FORWARDING_HEADERS = ("forwarded", "x-forwarded-for", "x-real-ip")
LOG_EVERY_S = 60.0
_logged = {"at": -LOG_EVERY_S}
_lock = threading.Lock()


def from_this_machine(request: Request) -> bool:
    """True for a loopback caller that no proxy forwarded (the organizer on this host)."""
    host = request.client.host if request.client else ""
    return host in LOOPBACK and not any(h in request.headers for h in FORWARDING_HEADERS)


def refusal(error: UnknownTokenError, request: Request, settings: ServiceSettings) -> str:
    """The refusal's message: the store named for a local caller, else pointed to the log."""
    where = settings.store_words
    if from_this_machine(request):
        return f"{error}; this server reads {where}"
    _log_once(where)
    return f"{error}; the server's log names the data folder it reads"


def _log_once(where: str) -> None:
    """Log the store behind a refused token, at most once per ``LOG_EVERY_S``."""
    now = time.monotonic()
    with _lock:
        if now - _logged["at"] < LOG_EVERY_S:
            return
        _logged["at"] = now
    log.warning("an API token this server does not hold was refused; this server reads %s", where)
