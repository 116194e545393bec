"""Read a ``challenge.yaml`` once into a frozen ``Challenge``, or fail naming file and YAML path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from yaml.nodes import Node

from proctor.errors import ConfigError
from proctor.formats.bounded_yaml import (
    BUNDLE_BOUNDS,
    BoundedLoader,
    YamlBoundsError,
    YamlDocumentError,
    compose_file,
    read_file,
)
from proctor.spec.bundled_environments import bundled_declaration
from proctor.spec.environment import HOST, Environment, EnvironmentSpec
from proctor.spec.model import Challenge, PublishedFile, StandIn, Task, TaskKit
from proctor.spec.protocols import (
    PROTOCOL_MODELS,
    LocatedError,
    ProtocolModels,
    describe_error,
    is_other_branch,
)
from proctor.spec.scorer import SCORER_CATALOG, ConcurrentIngestion, ScorerCatalog, ScoringProgram
from proctor.spec.yaml_marks import seen_at

CHALLENGE_FILE = "challenge.yaml"


class _UniqueKeyLoader(BoundedLoader):
    """The bounded safe loader, refusing duplicate keys instead of keeping the last one."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            line = key_node.start_mark.line + 1
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key {key!r} (line {line}): keep only one",
                key_node.start_mark,
            )
        seen.add(key)
    return loader.construct_mapping(node)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _all_errors(err: ValidationError, path: Path) -> ConfigError:
    """One error naming every problem (file, YAML path, what to do), not just the first.

    Each problem found in the file also names its line and column, and what the YAML parser
    read there when a key and value were written with ``=`` (``yaml_marks``).
    """
    errors = [e for e in err.errors() if not is_other_branch(e)] or err.errors()
    errors = [e for e in errors if not _echo_of_deeper_error(e, errors)]
    try:
        root = compose_file(path)
    except (OSError, ValueError):
        root = None
    found = list(dict.fromkeys(_placed(describe_error(e), root) for e in errors))
    if len(found) == 1:
        location, message = found[0]
        return ConfigError(message, path=path, location=location)
    listing = "\n".join(f"  - {location}: {message}" for location, message in found)
    first = found[0][0]
    return ConfigError(f"{len(found)} problems:\n{listing}", path=path, location=first)


def _placed(problem: tuple[str, str], root: Node | None) -> tuple[str, str]:
    """A problem whose message ends with where it lies in the file (line and column)."""
    location, message = problem
    unknown = message.startswith("unknown key")
    seen = seen_at(root, location, the_key=unknown)
    return (location, f"{message} ({seen})") if seen else problem


def _echo_of_deeper_error(error: Any, errors: list[Any]) -> bool:
    """True for "tuple too short" on a list whose items failed (the items' errors say why)."""
    if error["type"] != "too_short":
        return False
    loc = tuple(error["loc"])
    return any(tuple(e["loc"])[: len(loc)] == loc and len(e["loc"]) > len(loc) for e in errors)


def _combined(problems: list[ConfigError], path: Path) -> ConfigError:
    """One error for the folder problems of every task (all of them, not just the first)."""
    if len(problems) == 1:
        return problems[0]
    listing = "\n".join(f"  - {p.location}: {p.message}" for p in problems)
    return ConfigError(
        f"{len(problems)} problems:\n{listing}", path=path, location=problems[0].location
    )


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = read_file(path, BUNDLE_BOUNDS, _UniqueKeyLoader)
    except FileNotFoundError:
        raise ConfigError(
            "no challenge.yaml here: pass a challenge folder or a bundled challenge name", path=path
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc}", path=path) from exc
    except YamlBoundsError as exc:
        raise ConfigError(str(exc), path=path) from None
    except YamlDocumentError as exc:
        raise ConfigError(f"not valid YAML: {exc}", path=path) from None
    if not isinstance(data, dict):
        raise ConfigError("the top level must be a mapping of keys to values", path=path)
    return data


def read_mapping(location: Path) -> dict[str, Any]:
    """The raw mapping of ``location``'s ``challenge.yaml`` (bounded, duplicate keys refused).

    For tools that write a changed copy of the file (the starting kit's replica); everything
    else reads the typed ``Challenge`` of :func:`load_challenge`.
    """
    return _read_yaml(location / CHALLENGE_FILE if location.is_dir() else location)


def _check_task_folders(task: Task, index: int, root: Path, path: Path) -> Task:
    resolved: dict[str, Path | None] = {}
    for key in ("public_inputs", "hidden_inputs", "hidden_references"):
        rel = getattr(task, key)
        if rel is None:
            resolved[key] = None
            continue
        folder = (root / rel).resolve()
        if not folder.is_dir():
            raise ConfigError(
                f"folder {folder} does not exist: create it or fix the path",
                path=path,
                location=f"tasks[{index}].{key}",
            )
        resolved[key] = folder
    public = resolved["public_inputs"]
    if public is None:  # the model requires public_inputs
        raise ConfigError(
            "required key is missing", path=path, location=f"tasks[{index}].public_inputs"
        )
    for key in ("hidden_inputs", "hidden_references"):
        hidden = resolved[key]
        if hidden is not None and hidden.is_relative_to(public):
            raise ConfigError(
                "hidden data must not lie inside the public inputs folder, or it would reach "
                "every entry: move it out",
                path=path,
                location=f"tasks[{index}].{key}",
            )
    inputs, references = resolved["hidden_inputs"], resolved["hidden_references"]
    if inputs is not None and references is None:
        raise ConfigError(
            "a task with hidden inputs needs hidden references to score the exam: add them",
            path=path,
            location=f"tasks[{index}].hidden_references",
        )
    if inputs is not None and references is not None and references.is_relative_to(inputs):
        raise ConfigError(
            "hidden references must not lie inside the hidden inputs folder, which the exam "
            "shows to every entry: move them out",
            path=path,
            location=f"tasks[{index}].hidden_references",
        )
    update: dict[str, object] = dict(resolved)
    update["kit"] = _resolve_kit(task, (inputs, references), index, (root, path))
    program = task.scoring_program
    if program is not None:
        update["scorer"] = _resolve_program(program, index, root, path)
    return task.model_copy(update=update)


def _resolve_kit(
    task: Task, hidden: tuple[Path | None, Path | None], index: int, places: tuple[Path, Path]
) -> TaskKit:
    """The task's kit block with its stand-in's folders made absolute."""
    if task.kit.stand_in is None:
        return task.kit
    stand_in = _resolve_stand_in(task.kit.stand_in, hidden, index, places)
    return task.kit.model_copy(update={"stand_in": stand_in})


def _resolve_stand_in(
    stand_in: StandIn,
    hidden: tuple[Path | None, Path | None],
    index: int,
    places: tuple[Path, Path],
) -> StandIn:
    """The stand-in's folders made absolute: folders of the challenge, apart from hidden data.

    ``places``: the challenge folder and its ``challenge.yaml``.
    """
    root, path = places
    update: dict[str, Path] = {}
    for key in ("inputs", "references"):
        where = f"tasks[{index}].kit.stand_in.{key}"
        folder = (root / getattr(stand_in, key)).resolve()
        if not folder.is_relative_to(root) or not folder.is_dir():
            raise ConfigError(
                f"{folder} is not a folder inside the challenge folder: create it (public data "
                "shaped as the task's hidden "
                + ("inputs" if key == "inputs" else "references")
                + ") or fix the path",
                path=path,
                location=where,
            )
        for secret in hidden:
            if secret is not None and _overlap(folder, secret):
                raise ConfigError(
                    f"{folder} overlaps the hidden data {secret}: the stand-in goes into every "
                    "starting kit, so give it public data of its own",
                    path=path,
                    location=where,
                )
        update[key] = folder
    return stand_in.model_copy(update=update)


def _overlap(one: Path, other: Path) -> bool:
    return one.is_relative_to(other) or other.is_relative_to(one)


def _resolve_files(challenge: Challenge, root: Path, path: Path) -> tuple[PublishedFile, ...]:
    """The organizer's extra files made absolute: files of the challenge, none of them hidden."""
    hidden = [
        folder
        for task in challenge.tasks
        for folder in (task.hidden_inputs, task.hidden_references)
        if folder is not None
    ]
    resolved = []
    for index, item in enumerate(challenge.files):
        where = f"files[{index}].path"
        found = (root / item.path).resolve()
        if not found.is_relative_to(root) or not found.is_file():
            raise ConfigError(
                f"{found} is not a file inside the challenge folder: fix the path",
                path=path,
                location=where,
            )
        if any(found.is_relative_to(folder) for folder in hidden):
            raise ConfigError(
                f"{found} lies in the hidden data: a published file must be public",
                path=path,
                location=where,
            )
        resolved.append(item.model_copy(update={"path": found}))
    return tuple(resolved)


def _resolve_program(program: ScoringProgram, index: int, root: Path, path: Path) -> ScoringProgram:
    """The scoring program with its folder made absolute: a folder inside the challenge."""
    where = f"tasks[{index}].scorer.program"
    folder = (root / program.program).resolve()
    if not folder.is_relative_to(root):
        raise ConfigError(
            f"{folder} lies outside the challenge folder: put the scoring program inside it",
            path=path,
            location=where,
        )
    if not folder.is_dir():
        raise ConfigError(
            f"folder {folder} does not exist: create it (the scoring program's folder) or fix "
            "the path",
            path=path,
            location=where,
        )
    environment = _resolve_environment(program.environment, root, path, f"tasks[{index}].scorer")
    update: dict[str, object] = {"program": folder, "environment": environment}
    if program.concurrent_ingestion is not None:
        ingestion = _resolve_ingestion(program.concurrent_ingestion, index, root, path)
        update["concurrent_ingestion"] = ingestion
    return program.model_copy(update=update)


def _resolve_ingestion(
    ingestion: ConcurrentIngestion, index: int, root: Path, path: Path
) -> ConcurrentIngestion:
    """The concurrent ingestion with its folders made absolute: folders inside the challenge."""
    update: dict[str, object] = {}
    for key in ("program", "input_data"):
        relative = getattr(ingestion, key)
        if relative is None:
            continue
        folder = (root / relative).resolve()
        if not folder.is_relative_to(root) or not folder.is_dir():
            raise ConfigError(
                f"{folder} is not a folder inside the challenge folder: fix the path",
                path=path,
                location=f"tasks[{index}].scorer.concurrent_ingestion.{key}",
            )
        update[key] = folder
    return ingestion.model_copy(update=update)


def load_challenge(location: Path, protocols: ProtocolModels, scorers: ScorerCatalog) -> Challenge:
    """Parse ``location`` (a challenge folder or its ``challenge.yaml``) into a ``Challenge``.

    ``protocols`` gives the settings model of each protocol kind that may be named (the driver
    table's), ``scorers`` the scorers and scorer kinds a task may name (the scorer table's):
    ``proctor.resolve.load_challenge`` passes both. Paths in the result are absolute.
    Raises ``ConfigError`` naming the file and the YAML path of the first problem.
    """
    path = location / CHALLENGE_FILE if location.is_dir() else location
    root = path.parent.resolve()
    data = _read_yaml(path)
    try:
        context = {PROTOCOL_MODELS: protocols, SCORER_CATALOG: scorers}
        challenge = Challenge.model_validate(data, context=context)
    except ValidationError as err:
        raise _all_errors(err, path) from None
    checked: list[Task] = []
    problems: list[ConfigError] = []
    for index, task in enumerate(challenge.tasks):
        try:
            checked.append(_check_task_folders(task, index, root, path))
        except ConfigError as err:
            problems.append(err)
    if problems:
        raise _combined(problems, path)
    _check_terms(challenge, root, path)
    tasks = tuple(checked)
    tasks = tuple(
        task.model_copy(
            update={
                "environment": _resolve_environment(task.environment, root, path, f"tasks[{i}]")
            }
        )
        for i, task in enumerate(tasks)
    )
    environment = _resolve_environment(challenge.environment, root, path, "")
    try:
        protocol = challenge.protocol.resolved(root)
    except LocatedError as err:
        raise ConfigError(str(err), path=path, location=f"protocol.{err.location}") from None
    update = {"tasks": tasks, "root": root, "environment": environment, "protocol": protocol}
    resolved = challenge.model_copy(update=update)
    _check_base_aliases(resolved, path)
    return resolved.model_copy(update={"files": _resolve_files(resolved, root, path)})


def _check_base_aliases(challenge: Challenge, path: Path) -> None:
    """Refuse an ``entry_images.bases`` alias naming an environment the challenge lacks."""
    declared = challenge.declared_environments()
    places: list[tuple[str, Environment | None]] = [("environment", challenge.environment)]
    for index, task in enumerate(challenge.tasks):
        program = task.scoring_program
        places.append((f"tasks[{index}].environment", task.environment))
        if program is not None:
            places.append((f"tasks[{index}].scorer.environment", program.environment))
    for location, spec in places:
        if not isinstance(spec, EnvironmentSpec):
            continue
        for public, name in spec.entry_images.bases.items():
            if name not in declared:
                known = ", ".join(sorted(declared))
                raise ConfigError(
                    f"{public!r} names the environment {name!r}, which this challenge does "
                    f"not declare: name one it declares ({known})",
                    path=path,
                    location=f"{location}.entry_images.bases",
                )


def _check_terms(challenge: Challenge, root: Path, path: Path) -> None:
    """Refuse ``registration.terms`` naming no file inside the challenge folder."""
    registration = challenge.registration
    if registration is None or registration.terms is None:
        return
    found = (root / registration.terms).resolve()
    if not found.is_relative_to(root) or not found.is_file():
        raise ConfigError(
            f"{registration.terms} is no file of the challenge folder: write the terms there "
            "(e.g. pages/terms.md) or fix the path",
            path=path,
            location="registration.terms",
        )


def _resolve_environment(
    environment: Environment | None, root: Path, path: Path, where: str
) -> Environment | None:
    """The declaration with its paths made absolute; files it needs must exist.

    A bundled declaration's name is replaced by that declaration (its paths relative to its
    own file).
    """
    prefix = f"{where}.environment" if where else "environment"
    if environment is None or environment == HOST:
        return environment
    if isinstance(environment, str):
        environment, path = bundled_declaration(environment, path, prefix)
        root, prefix = path.parent, "environment"

    def existing(rel: Path, location: str) -> Path:
        found = (root / rel).resolve()
        if not found.exists():
            raise ConfigError(
                f"{found} does not exist: create it or fix the path",
                path=path,
                location=f"{prefix}.{location}",
            )
        return found

    update: dict[str, object] = {}
    if environment.python is not None:
        python = environment.python
        requirements = existing(python.requirements, "python.requirements")
        update["python"] = python.model_copy(
            update={"requirements": requirements, "lock": (root / python.lock).resolve()}
        )
    update["files"] = tuple(
        item.model_copy(update={"source": existing(item.source, f"files[{i}].source")})
        for i, item in enumerate(environment.files)
    )
    if environment.lock is not None:
        update["lock"] = (root / environment.lock).resolve()
    return environment.model_copy(update=update)
