"""The one table of protocol drivers, by kind.

Each driver carries its ``kind``, its ``summary`` and its ``settings_model`` (the pydantic
model of its ``protocol:`` block), so nothing else lists protocols. A plug-in adds a protocol
without touching Proctor: a distribution declares its driver class as an entry point of the
group :data:`PLUGIN_GROUP`, named by its kind::

    [project.entry-points."proctor.protocols"]
    echo = "echo_protocol:EchoDriver"

The installed distributions are scanned once per module search path (:mod:`proctor.plugins`);
a plug-in cannot replace a built-in kind.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint

from proctor import plugins
from proctor.errors import ConfigError
from proctor.protocols.base import ProtocolDriver
from proctor.protocols.command import CommandDriver
from proctor.protocols.ingestion import IngestionDriver
from proctor.protocols.physionet_model import PhysioNetModelDriver
from proctor.protocols.predictions import PredictionsDriver
from proctor.protocols.python_model import PythonModelDriver
from proctor.protocols.records import RecordsDriver
from proctor.protocols.results import ResultsDriver
from proctor.protocols.single_file import SingleFileDriver
from proctor.spec.protocols import ProtocolSettings

BUILTIN_DRIVERS: tuple[type[ProtocolDriver], ...] = (
    RecordsDriver,
    CommandDriver,
    PythonModelDriver,
    PredictionsDriver,
    SingleFileDriver,
    ResultsDriver,
    IngestionDriver,
    PhysioNetModelDriver,
)
"""The protocols Proctor ships."""

PLUGIN_GROUP = "proctor.protocols"
"""The entry-point group through which an installed distribution adds protocol drivers."""


def _plugin_driver(entry: EntryPoint) -> type[ProtocolDriver]:
    where = plugins.where(entry)
    driver = plugins.load(entry, "protocol")
    if not (isinstance(driver, type) and issubclass(driver, ProtocolDriver)):
        raise ConfigError(f"{where} must name a ProtocolDriver subclass")
    if driver.kind != entry.name:
        raise ConfigError(f"{where} names a driver of kind {driver.kind!r}: name it alike")
    if not issubclass(driver.settings_model, ProtocolSettings):
        raise ConfigError(f"the settings model of {where} must derive ProtocolSettings")
    return driver


def drivers() -> dict[str, type[ProtocolDriver]]:
    """Every protocol driver by kind: the built-in ones, then the installed plug-ins'."""
    table: dict[str, type[ProtocolDriver]] = {driver.kind: driver for driver in BUILTIN_DRIVERS}
    for entry in plugins.declared(PLUGIN_GROUP):
        if entry.name not in table:
            table[entry.name] = _plugin_driver(entry)
    return table


def driver_for(kind: str) -> type[ProtocolDriver]:
    """The driver of protocol ``kind``; a ``ConfigError`` when none is installed."""
    found = drivers().get(kind)
    if found is None:
        raise ConfigError(f"no driver runs protocol kind {kind!r}", location="protocol.kind")
    return found


def settings_models() -> dict[str, type[ProtocolSettings]]:
    """The settings model of each protocol kind (what ``spec`` validates a block with)."""
    return {kind: driver.settings_model for kind, driver in drivers().items()}
