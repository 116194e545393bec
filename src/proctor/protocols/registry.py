"""The registry from protocol kind to driver.

Built-in drivers are listed here; a plug-in driver (or a test's toy protocol) registers with
:func:`register_driver`, which also declares its kind in :mod:`proctor.types` so that a
``challenge.yaml`` naming it loads.
"""

from __future__ import annotations

import threading

from proctor.errors import ConfigError
from proctor.protocols.base import ProtocolDriver
from proctor.protocols.command import CommandDriver
from proctor.protocols.ingestion import IngestionDriver
from proctor.protocols.predictions import PredictionsDriver
from proctor.protocols.python_model import PythonModelDriver
from proctor.protocols.records import RecordsDriver
from proctor.protocols.results import ResultsDriver
from proctor.protocols.single_file import SingleFileDriver
from proctor.types import ProtocolDeclaration, declare_protocol, withdraw_protocol

_BUILTIN: dict[str, type[ProtocolDriver]] = {
    RecordsDriver.kind: RecordsDriver,
    CommandDriver.kind: CommandDriver,
    PredictionsDriver.kind: PredictionsDriver,
    PythonModelDriver.kind: PythonModelDriver,
    SingleFileDriver.kind: SingleFileDriver,
    ResultsDriver.kind: ResultsDriver,
    IngestionDriver.kind: IngestionDriver,
}
_DRIVERS: dict[str, type[ProtocolDriver]] = dict(_BUILTIN)
_LOCK = threading.Lock()


def register_driver(driver: type[ProtocolDriver]) -> None:
    """Make ``driver`` run challenges whose ``protocol.kind`` is ``driver.kind``."""
    with _LOCK:
        _DRIVERS[driver.kind] = driver
    declare_protocol(ProtocolDeclaration(driver.kind, driver.summary, driver.settings_model))


def unregister_driver(kind: str) -> None:
    """Remove a driver registered at run time (built-in drivers stay)."""
    with _LOCK:
        if kind not in _BUILTIN:
            _DRIVERS.pop(kind, None)
    withdraw_protocol(kind)


def driver_for(kind: str) -> type[ProtocolDriver]:
    """The driver of protocol ``kind``; a ``ConfigError`` when none is registered."""
    with _LOCK:
        found = _DRIVERS.get(kind)
    if found is None:
        raise ConfigError(f"no driver runs protocol kind {kind!r}", location="protocol.kind")
    return found


def registered_kinds() -> tuple[str, ...]:
    """Every protocol kind with a driver, sorted."""
    with _LOCK:
        return tuple(sorted(_DRIVERS))
