"""``proctor challenge import``: a Codabench, CodaLab or EvalAI bundle → a Proctor challenge.

The dispatcher reads the bundle's YAML, picks the first format whose ``detect`` accepts it
(:data:`FORMATS`, a small table: one row per format module) and imports it: the row's
``build`` copies the bundle's files under DEST and returns the ``challenge.yaml`` document
(:mod:`.document`) with the answer, which the dispatcher writes. Codabench and CodaLab build
through a :class:`.plan.BundlePlan` (:func:`planned`). See docs/import-bundles.md.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proctor.errors import ConfigError, UsageError
from proctor.resolve import load_challenge
from proctor.services.local.bundle_import import codabench, codalab, evalai
from proctor.services.local.bundle_import.document import Imported, ImportResult, write_document
from proctor.services.local.bundle_import.environment import (
    choose_environment,
    default_environment,
    describe_choice,
    describe_image,
    describe_scaffold,
    known_image,
    scaffold_environment,
)
from proctor.services.local.bundle_import.plan import BundlePlan, plan_import
from proctor.services.local.bundle_import.reading import (
    BundleRefusedError,
    read_yaml,
    unpack_source,
)
from proctor.services.local.bundle_import.stand_ins import add_stand_ins
from proctor.services.local.bundle_import.unzip import import_limits, unpack_budget
from proctor.services.local.program_compile import compile_warnings
from proctor.services.local.program_imports import environment_warnings
from proctor.settings import Settings
from proctor.spec import Challenge

__all__ = ["FORMATS", "BundleRefusedError", "ImportResult", "import_challenge"]

Builder = Callable[[dict[str, Any], Path, Path, str | None], Imported]
"""(YAML, bundle folder, DEST, ``--environment`` or None) → the document and the answer.

The builder copies the bundle's files under DEST; the dispatcher writes the document."""
PlanBuilder = Callable[[dict[str, Any], Path, Path, Any], BundlePlan]
"""(YAML, bundle folder, DEST, the environment) → a plan of Codabench-style programs."""


@dataclass(frozen=True)
class BundleFormat:
    """One bundle format: its YAML file, how to recognize it, and how to build the challenge."""

    name: str
    yaml_file: str
    detect: Callable[[Any], bool]
    build: Builder


def planned(build_plan: PlanBuilder) -> Builder:
    """The builder of a format whose programs run as Codabench's (a :class:`.plan.BundlePlan`).

    The environment is the ``--environment`` given, else the one standing for the bundle's
    ``docker_image``, else (an image Proctor does not know) one declared in ``environment/``
    from the programs' imports; the kit gets its stand-ins; the first warning names it.
    """

    def build(spec: dict[str, Any], bundle: Path, dest: Path, environment: str | None) -> Imported:
        chosen = choose_environment(environment, default_environment(spec), dest)
        plan = build_plan(spec, bundle, dest, chosen)
        scaffold = environment is None and not known_image(spec)
        if scaffold:
            plan.environment = scaffold_environment(spec, dest)
        add_stand_ins(plan, dest)
        imported = plan_import(plan, dest)
        described = describe_image(spec)
        first = (
            describe_scaffold(spec, plan.environment)
            if scaffold
            else f"environment: {describe_choice(chosen)} ({described})"
        )
        imported.result.warnings.insert(0, first)
        return imported

    return build


FORMATS: tuple[BundleFormat, ...] = (
    BundleFormat(
        codabench.FORMAT, "competition.yaml", codabench.detect, planned(codabench.build_plan)
    ),
    BundleFormat(codalab.FORMAT, "competition.yaml", codalab.detect, planned(codalab.build_plan)),
    BundleFormat(evalai.FORMAT, evalai.CONFIG, evalai.detect, evalai.build),
)
"""Tried in order; the first whose YAML file exists and whose ``detect`` accepts it maps it."""


def import_challenge(
    source: Path,
    dest: Path,
    environment: str | None = None,
    *,
    max_bytes: int | None = None,
    max_ratio: float | None = None,
) -> ImportResult:
    """Import the bundle at ``source`` (a folder or a zip) into the new folder ``dest``.

    ``environment``: ``host``, a bundled environment's name or a folder holding
    ``environment.yaml``, instead of the format's default. ``max_bytes``, ``max_ratio``:
    what the bundle's zips may unpack to in all, and expand by (default: an entry's limits).
    The folder is read through a copy with its links resolved inside it (see
    :func:`.reading.unpack_source`).
    """
    if not source.exists():
        raise UsageError(f"{source}: no such file or folder")
    if dest.exists() and any(dest.iterdir()):
        raise UsageError(f"{dest}: not empty: give a new folder for the challenge")
    limits = import_limits(max_bytes, max_ratio)
    with tempfile.TemporaryDirectory(prefix="proctor-import-") as scratch, unpack_budget(limits):
        bundle = unpack_source(source, Path(scratch))
        for form in FORMATS:
            found = bundle / form.yaml_file
            if not found.is_file():
                continue
            shown = source / found.relative_to(scratch)
            try:
                spec = read_yaml(found)
            except ConfigError as err:
                raise ConfigError(err.message, path=shown) from None
            if not form.detect(spec):
                continue
            dest.mkdir(parents=True, exist_ok=True)
            try:
                result = _import(form, spec, bundle, dest, environment)
                loaded = _loads(dest)
                result.warnings += environment_warnings(loaded)
                result.warnings += compile_warnings(loaded, Settings.from_env())
                return result
            except ConfigError as err:
                shutil.rmtree(dest, ignore_errors=True)
                raise ConfigError(err.message, path=shown, location=err.location) from None
            except BaseException:
                shutil.rmtree(dest, ignore_errors=True)
                raise
    names = ", ".join(sorted({form.yaml_file for form in FORMATS}))
    raise UsageError(f"{source}: not a bundle Proctor imports (no {names} it recognizes)")


def _loads(dest: Path) -> Challenge:
    """Refuse a written challenge Proctor cannot load (a mapping the importer got wrong)."""
    try:
        return load_challenge(dest)
    except ConfigError as err:
        raise ConfigError(
            f"the challenge written from this bundle does not load ({err}): correct the "
            "bundle's YAML where it says, or report the bundle if it runs on its platform"
        ) from None


def _import(
    form: BundleFormat, spec: Any, bundle: Path, dest: Path, environment: str | None
) -> ImportResult:
    """One format's import of the unpacked ``bundle`` into ``dest``: built, then written."""
    imported = form.build(spec, bundle, dest, environment)
    write_document(imported.document, dest, imported.header, imported.width)
    return imported.result
