"""The one scorer table: the built-in scorers by name, and the scorer kinds by kind.

A task's ``scorer`` is a scorer's name (``physionet2018``) or a scorer kind's mapping
(``{table: {...}}``, a scoring program, ``{evalai: ...}``). Each scorer's module declares it
(``physionet2018.SCORER``: its declaration, score function and output check; ``table.KIND``:
a :class:`ScorerKind` with its settings model), and this table lists them. A plug-in adds one
without touching Proctor: a distribution names its :class:`Scorer` or :class:`ScorerKind` as
an entry point of the group :data:`PLUGIN_GROUP`, under the scorer's name or the kind::

    [project.entry-points."proctor.scorers"]
    exact_rows = "toy_scorer:SCORER"

A plug-in cannot replace a built-in name. :func:`scorer_catalog` is what a load validates a
task's ``scorer`` against (``proctor.resolve``); :func:`scorer_for` is what the pipeline asks:
the scorer of a task's ``scorer``, running an organizer's program through the given runners
(the pipeline owns the sandbox; scorers never touch it).
"""

from __future__ import annotations

from importlib.metadata import EntryPoint

from proctor import plugins
from proctor.errors import ConfigError
from proctor.scoring import (
    autowsl,
    ehealthkd,
    evalai,
    physionet2017,
    physionet2018,
    program,
    table,
    visceral,
)
from proctor.scoring.base import Scorer, ScorerKind
from proctor.spec.programs import ProgramRunner
from proctor.spec.scorer import ScorerCatalog, ScorerSettings, ScorerSpec

BUILTIN_SCORERS: tuple[Scorer, ...] = (
    physionet2018.SCORER,
    physionet2017.SCORER,
    ehealthkd.SCORER,
    autowsl.SCORER,
    visceral.SCORER,
)
"""The named scorers Proctor ships (``scorer: NAME``)."""

BUILTIN_KINDS: tuple[ScorerKind, ...] = (program.KIND, table.KIND, evalai.KIND)
"""The scorer kinds Proctor ships (a ``scorer:`` mapping with no kind is a scoring program)."""

PLUGIN_GROUP = "proctor.scorers"
"""The entry-point group through which an installed distribution adds scorers or kinds."""


def _plugin(entry: EntryPoint) -> Scorer | ScorerKind:
    found = plugins.load(entry, "scorer")
    where = plugins.where(entry)
    if isinstance(found, Scorer):
        if found.name != entry.name:
            raise ConfigError(f"{where} names a scorer called {found.name!r}: name it alike")
        return found
    if isinstance(found, ScorerKind):
        if found.kind != entry.name:
            raise ConfigError(f"{where} names a scorer kind {found.kind!r}: name it alike")
        if not issubclass(found.settings_model, ScorerSettings):
            raise ConfigError(f"the settings model of {where} must derive ScorerSettings")
        return found
    raise ConfigError(f"{where} must name a Scorer or a ScorerKind")


def _table() -> tuple[dict[str, Scorer], dict[str, ScorerKind]]:
    named = {scorer.name: scorer for scorer in BUILTIN_SCORERS}
    kinds = {kind.kind: kind for kind in BUILTIN_KINDS}
    for entry in plugins.declared(PLUGIN_GROUP):
        if entry.name in named or entry.name in kinds:
            continue
        found = _plugin(entry)
        if isinstance(found, Scorer):
            named[entry.name] = found
        else:
            kinds[entry.name] = found
    return named, kinds


def scorers() -> dict[str, Scorer]:
    """Every named scorer by name: the built-in ones, then the installed plug-ins'."""
    return _table()[0]


def scorer_kinds() -> dict[str, ScorerKind]:
    """Every scorer kind by the name a ``scorer:`` mapping gives, plug-ins' included."""
    return _table()[1]


def scorer_catalog() -> ScorerCatalog:
    """What a task's ``scorer`` may be: the named scorers' declarations, the kinds' models."""
    named, kinds = _table()
    return ScorerCatalog(
        {name: scorer.declaration for name, scorer in named.items()},
        {name: kind.settings_model for name, kind in kinds.items()},
        {check.kind: check.settings_model for check in program.CHECK_KINDS},
    )


def scorer_for(
    spec: ScorerSpec,
    runner: ProgramRunner | None = None,
    check_runner: ProgramRunner | None = None,
) -> Scorer:
    """The scorer of a task's ``scorer`` value: a named one, or its kind's.

    ``runner`` runs an organizer's program in the sandbox (required by a scoring program),
    ``check_runner`` its output check (default: ``runner``). A ``ConfigError`` for a name or
    kind the table does not hold.
    """
    named, kinds = _table()
    if isinstance(spec, str):
        found = named.get(spec)
        if found is None:
            known = ", ".join(sorted(named))
            raise ConfigError(f"unknown scorer {spec!r}: built-in scorers are {known}")
        return found
    for kind in kinds.values():
        if type(spec) is kind.settings_model:
            return kind.make(spec, runner, check_runner)
    raise ConfigError(f"scorer kind {type(spec).__name__} is not in the scorer table")
