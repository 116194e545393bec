"""Extensions installed beside Proctor: the entry points of a group, read once per ``sys.path``.

A distribution adds a protocol driver, a scorer or a table metric without touching Proctor
by naming it as an entry point of that extension's group (``proctor.protocols``,
``proctor.scorers``, ``proctor.table_metrics``)::

    [project.entry-points."proctor.table_metrics"]
    hits = "hits_metric:HITS"

Each extension table (``protocols.registry``, ``scoring.registry``,
``scoring.table_metrics``) reads its group here and checks what it loads.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points

from proctor.errors import ConfigError


@lru_cache(maxsize=16)
def _declared(group: str, search_path: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    """The entry points of ``group`` installed on ``search_path`` (the current ``sys.path``)."""
    return tuple(entry_points(group=group))


def declared(group: str) -> tuple[EntryPoint, ...]:
    """The entry points of ``group`` installed now (scanned again when ``sys.path`` changes)."""
    return _declared(group, tuple(sys.path))


def where(entry: EntryPoint) -> str:
    """How an error names ``entry``: its name, value and group."""
    return f"entry point {entry.name!r} = {entry.value!r} of group {entry.group!r}"


def load(entry: EntryPoint, what: str) -> object:
    """The object ``entry`` names; a ``ConfigError`` naming it (and ``what`` it is) if it fails."""
    try:
        return entry.load()
    except Exception as err:  # a plug-in's import fails in its own ways
        raise ConfigError(f"the {what} plug-in of {where(entry)} does not load: {err}") from err
