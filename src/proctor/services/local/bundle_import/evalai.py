"""An EvalAI challenge folder (``challenge_config.yaml``) as a Proctor challenge folder.

EvalAI's configuration links phases, dataset splits and leaderboards through
``challenge_phase_splits``; Proctor's mapping:

- each phase–split pair is a task ``CODENAME-SPLIT`` scored by the ``evalai`` scorer (the
  phase's ``test_annotation_file`` is its hidden reference, its codename what ``evaluate`` is
  given, the split the ``result`` entry it reports);
- each phase is a phase (``start_date``/``end_date`` in UTC, ``max_submissions_per_day`` and
  ``max_submissions`` as its quota) with a board per leaderboard: the ``labels`` as columns,
  ``default_order_by`` first, directions from ``metadata.LABEL.sort_ascending`` (else the
  split's ``is_leaderboard_order_descending``), read by :mod:`.evalai_boards`;
- the upload is the file a participant gives EvalAI, zipped (the ``single_file`` protocol);
  EvalAI publishes no annotations, so the quiz scores nothing;
- ``templates/`` is copied to ``pages/``; the ``description``, ``evaluation_details`` and
  ``terms_and_conditions`` templates are the overview, evaluation and terms pages;
- ``approval_required`` is the registration mode (``approval``, else ``open``) with the
  terms page as the terms people accept; a configuration without it asks no registration.

The dispatcher (:mod:`proctor.services.local.bundle_import`) finds ``challenge_config.yaml``
and calls :func:`build`; it writes the document :func:`build` returns.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from proctor.errors import ConfigError
from proctor.services.local.bundle_import.document import (
    Board,
    ChallengeDocument,
    EvalaiScorer,
    Imported,
    ImportResult,
    Metric,
    Phase,
    Protocol,
    Quota,
    Registration,
    SubmissionField,
    Task,
    registration,
)
from proctor.services.local.bundle_import.environment import choose_environment
from proctor.services.local.bundle_import.evalai_boards import leaderboard_metrics, note_precision
from proctor.services.local.bundle_import.evalai_refusals import refuse_unrunnable
from proctor.services.local.bundle_import.naming import slug
from proctor.services.local.bundle_import.network import note_network_use
from proctor.services.local.bundle_import.participant_code import note_participant_code
from proctor.services.local.bundle_import.reading import BundleRefusedError, bundle_file, flag, text
from proctor.services.local.bundle_import.unzip import safe_extract
from proctor.services.untrusted_tree import copy_inside
from proctor.spec.submission_fields import MAX_FIELDS

FORMAT = "evalai"
CONFIG = "challenge_config.yaml"
PACKAGE = "evaluation_script"
CASE = "submission"
DEFAULT_ENVIRONMENT = "codabench"
IGNORED_PHASE_KEYS = ("max_submissions_per_month",)
PAGE_KEYS = (
    ("description", "overview"),
    ("evaluation_details", "evaluation"),
    ("terms_and_conditions", "terms"),
)
"""EvalAI's template keys and the Proctor page (``spec.display``) each one is."""


EVALAI_KEYS = ("challenge_phases", "challenge_phase_splits", "leaderboard", "dataset_splits")
"""Keys only EvalAI's configuration has (other tools name their settings file alike)."""


def detect(config: Any) -> bool:
    """Whether the parsed ``challenge_config.yaml`` is EvalAI's: a mapping with its keys."""
    return isinstance(config, dict) and any(key in config for key in EVALAI_KEYS)


def _when(value: Any, where: str, path: Path) -> str | None:
    """An EvalAI date (UTC, with or without a time) as ISO 8601 with a time zone."""
    if value is None or value == "":
        return None
    try:
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except ValueError:
        raise ConfigError(
            f"{value!r} is not a date: write it as 2026-01-31 23:59:59", path=path, location=where
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.isoformat()


class EvalaiImport:
    """One import: the source folder, the destination, and what was noticed on the way."""

    def __init__(self, config: dict[str, Any], root: Path, dest: Path, environment: Any) -> None:
        self.root = root
        self.dest = dest
        self.config_path = root / CONFIG
        self.config = config
        self.environment = environment or DEFAULT_ENVIRONMENT
        self.warnings: list[str] = []
        self.precision: dict[str, int] = {}

    def by_id(self, key: str) -> dict[Any, dict[str, Any]]:
        """The items of a list key (``leaderboard``, ``challenge_phases``...) by their ``id``."""
        items = self.config.get(key) or []
        if not isinstance(items, list):
            raise ConfigError("must be a list", path=self.config_path, location=key)
        return {item.get("id"): item for item in items if isinstance(item, dict)}

    def inside(self, named: str, key: str) -> Path:
        """The file of the folder the YAML's ``key`` names; refused if it names one elsewhere."""
        found = bundle_file(self.root, named)
        if found is None:
            raise ConfigError(
                f"{named!r} is not a path inside the challenge folder: put the file in the "
                "folder and name it from there",
                path=self.config_path,
                location=key,
            )
        return found

    def evaluation_script(self) -> None:
        """Copy the evaluation script (its folder, else the zip the YAML names) to the folder."""
        target = self.dest / PACKAGE
        named = str(self.config.get("evaluation_script") or f"{PACKAGE}.zip")
        folder = self.root / PACKAGE
        archive = self.inside(named, "evaluation_script")
        if (folder / "__init__.py").is_file():
            copy_inside(folder, target)
        elif archive.is_file():
            safe_extract(archive, target)
            inner = [path for path in target.iterdir() if path.is_dir()]
            if not (target / "__init__.py").is_file() and len(inner) == 1:
                copy_inside(inner[0], target, exist_ok=True)
                shutil.rmtree(inner[0])
        if not (target / "__init__.py").is_file():
            raise ConfigError(
                f"no evaluation script: neither {PACKAGE}/__init__.py nor the zip {named} "
                "holding it",
                path=self.config_path,
                location="evaluation_script",
            )

    def task(
        self, phase: dict[str, Any], split: dict[str, Any], metrics: dict[str, tuple[str, str]]
    ) -> Task:
        """The task of one phase–split pair, its annotation copied as the hidden reference."""
        codename = str(phase.get("codename") or phase.get("id"))
        split_name = str(split.get("codename") or split.get("id"))
        name = slug(f"{codename}-{split_name}", "task")
        annotation = self.inside(
            str(phase.get("test_annotation_file") or ""),
            f"challenge_phases[{codename}].test_annotation_file",
        )
        if not annotation.is_file():
            raise ConfigError(
                f"the annotation file {annotation.name or '(none)'} is not in the folder",
                path=self.config_path,
                location=f"challenge_phases[{codename}].test_annotation_file",
            )
        data = self.dest / "data" / name
        for folder in (f"public/{CASE}", f"hidden/{CASE}", f"reference/{CASE}"):
            (data / folder).mkdir(parents=True, exist_ok=True)
        shutil.copy2(annotation, data / "reference" / CASE / annotation.name)
        scorer = EvalaiScorer(
            evalai=PACKAGE,
            phase=codename,
            split=split_name,
            annotation=annotation.name,
            labels={metric: label for metric, (label, _) in metrics.items() if metric != label},
            metrics={metric: Metric(direction=way) for metric, (_, way) in metrics.items()},
            environment=self.environment,
        )
        return Task(
            name=name,
            public_inputs=f"data/{name}/public/{CASE}",
            hidden_inputs=f"data/{name}/hidden/{CASE}",
            hidden_references=f"data/{name}/reference",
            scorer=scorer,
        )

    def phase(self, phase: dict[str, Any], tasks: list[str], boards: list[Board]) -> Phase:
        """A Proctor phase: dates, quota, boards."""
        codename = str(phase.get("codename") or phase.get("id"))
        where = f"challenge_phases[{codename}]"
        title = text(phase.get("name"), f"{where}.name") or codename
        opens, closes = (
            _when(phase.get(key), f"{where}.{key}", self.config_path)
            for key in ("start_date", "end_date")
        )
        quota = {
            target: int(phase[key])
            for key, target in (
                ("max_submissions_per_day", "per_day"),
                ("max_submissions", "total"),
            )
            if isinstance(phase.get(key), int) and phase[key] > 0
        }
        for key in IGNORED_PHASE_KEYS:
            if phase.get(key):
                self.warnings.append(f"{where}.{key}: Proctor has no equivalent; left out")
        return Phase(
            name=slug(codename, "phase"),
            title=title,
            tasks=tasks,
            opens=opens,
            closes=closes,
            quota=Quota(**quota) if quota else None,
            leaderboards=boards or None,
        )

    def protocol(self) -> Protocol:
        """One uploaded file; ``allowed_submission_file_types`` of every phase as its names."""
        types: set[str] = set()
        for phase in self.by_id("challenge_phases").values():
            allowed = str(phase.get("allowed_submission_file_types") or "")
            types |= {part.strip() for part in allowed.split(",") if part.strip()}
        patterns = sorted(f"*{kind}" for kind in types if kind.startswith("."))
        return Protocol(kind="single_file", file_patterns=patterns or ["*"])

    def build(self) -> ChallengeDocument:
        """The ``challenge.yaml`` document, with the folder's files written."""
        refuse_unrunnable(self.config, self.by_id("challenge_phases"), self.config_path)
        self.evaluation_script()
        note_network_use(self.dest, [self.dest / PACKAGE], self.warnings)
        note_participant_code(self.dest, [self.dest / PACKAGE], self.warnings)
        links = self.links()
        tasks = _with_phase_splits(links.tasks, list(links.phase_tasks.values()))
        if not tasks:
            raise ConfigError(
                "no phase is linked to a split and a leaderboard",
                path=self.config_path,
                location="challenge_phase_splits",
            )
        title = text(self.config.get("title"), "title") or self.root.name
        phases = self.proctor_phases(links)
        return ChallengeDocument(
            name=slug(title, "evalai-challenge"),
            title=title,
            description=text(self.config.get("short_description"), "short_description"),
            protocol=self.protocol(),
            tasks=tasks,
            leaderboard={"metric": next(iter(tasks[0].scorer.metrics))},
            environment="host",
            phases=phases,
            precision=self.precision or None,
            submission_fields=self.submission_fields() or None,
        )

    def submission_fields(self) -> list[SubmissionField]:
        """Every phase's ``submission_meta_attributes`` as ``submission_fields`` (by name, once).

        EvalAI's ``text`` is a line of text; a ``radio``, ``checkbox`` or ``boolean`` choice
        becomes one too, its options in the description. EvalAI shows them to the hosts only:
        not public.
        """
        found: dict[str, SubmissionField] = {}
        for codename, phase in self.by_id("challenge_phases").items():
            attributes = phase.get("submission_meta_attributes") or []
            if not isinstance(attributes, list):
                continue
            for index, attribute in enumerate(attributes):
                where = f"challenge_phases[{codename}].submission_meta_attributes[{index}]"
                field = _meta_field(attribute, where, self.warnings)
                if field is not None:
                    found.setdefault(field.name, field)
        return list(found.values())[:MAX_FIELDS]

    def links(self) -> _Links:
        """A task for each ``challenge_phase_splits`` entry, with its phase and board."""
        phases, boards, splits = (
            self.by_id("challenge_phases"),
            self.by_id("leaderboard"),
            self.by_id("dataset_splits"),
        )
        links = _Links(
            phase_tasks={key: [] for key in phases}, phase_boards={key: {} for key in phases}
        )
        for index, link in enumerate(self.config.get("challenge_phase_splits") or []):
            where = f"challenge_phase_splits[{index}]"
            phase = phases.get(link.get("challenge_phase_id"))
            split = splits.get(link.get("dataset_split_id"))
            board = boards.get(link.get("leaderboard_id"))
            if phase is None or split is None or board is None:
                raise ConfigError(
                    "names a phase, split or leaderboard id the file does not define",
                    path=self.config_path,
                    location=where,
                )
            given = link.get("is_leaderboard_order_descending")
            descending = None if given is None else given is not False
            metrics = leaderboard_metrics(
                board, descending, self.config_path, self.warnings, self.dest / PACKAGE
            )
            task = self.task(phase, split, metrics)
            links.tasks.append(task)
            links.phase_tasks[link["challenge_phase_id"]].append(task.name)
            links.phase_boards[link["challenge_phase_id"]].setdefault(
                link["leaderboard_id"], []
            ).append(task.name)
            links.board_metrics[link["leaderboard_id"]] = list(metrics)
            if link.get("visibility", 3) != 3:
                links.hidden_boards.add((link["challenge_phase_id"], link["leaderboard_id"]))
            note_precision(link, metrics, where, self.warnings, self.precision)
        return links

    def proctor_phases(self, links: _Links) -> list[Phase]:
        """Each phase holding tasks, with a board for each of its leaderboards."""
        phases = self.by_id("challenge_phases")
        return [
            self.phase(
                phases[key],
                names,
                [
                    Board(
                        name=f"leaderboard-{board_id}",
                        tasks=board_tasks,
                        metrics=list(links.board_metrics[board_id]),
                        public=(key, board_id) not in links.hidden_boards,
                    )
                    for board_id, board_tasks in links.phase_boards[key].items()
                ],
            )
            for key, names in links.phase_tasks.items()
            if names
        ]


@dataclass
class _Links:
    """What the ``challenge_phase_splits`` entries make: tasks, by phase and by board."""

    phase_tasks: dict[Any, list[str]]
    phase_boards: dict[Any, dict[Any, list[str]]]
    tasks: list[Task] = field(default_factory=list)
    hidden_boards: set[tuple[Any, Any]] = field(default_factory=set)
    board_metrics: dict[Any, list[str]] = field(default_factory=dict)


def _meta_field(attribute: Any, where: str, warnings: list[str]) -> SubmissionField | None:
    """One EvalAI meta attribute as a Proctor submission field (None: none can be made)."""
    if not isinstance(attribute, dict) or not str(attribute.get("name") or "").strip():
        warnings.append(f"{where}: an attribute without a name; left out")
        return None
    label = str(attribute["name"]).strip()[:80]
    name = re.sub(r"[^a-z0-9_]+", "_", label.lower()).strip("_")[:32] or "field"
    if not name[0].isalpha():
        name = f"f_{name}"[:32]
    description = str(attribute.get("description") or "").strip()
    kind = str(attribute.get("type") or "text")
    options = attribute.get("options")
    if kind == "boolean":
        options = ["true", "false"]
    if kind != "text" and isinstance(options, list) and options:
        choice = "one or more of" if kind == "checkbox" else "one of"
        shown = ", ".join(str(option) for option in options)
        description = f"{description} ({choice}: {shown})".strip()
    return SubmissionField(
        name=name,
        label=label,
        description=description[:500],
        required=bool(attribute.get("required")),
        public=False,
    )


def _with_phase_splits(tasks: list[Task], phases: list[list[str]]) -> list[Task]:
    """The tasks with their ``phase_splits`` (EvalAI fails a split its phase lacks)."""
    tasks = list(tasks)
    for names in phases:
        ours = [index for index, task in enumerate(tasks) if task.name in names]
        splits = [_split(tasks[index]) for index in ours]
        for index in ours:
            scorer = tasks[index].scorer.model_copy(update={"phase_splits": splits})
            tasks[index] = tasks[index].model_copy(update={"scorer": scorer})
    return tasks


def _split(task: Task) -> str:
    """The EvalAI split a task reports."""
    if not isinstance(task.scorer, EvalaiScorer):
        raise TypeError(f"task {task.name} has no EvalAI scorer")
    return task.scorer.split


def _pages(config: dict[str, Any], dest: Path) -> dict[str, str]:
    """The templates copied to ``dest/pages`` that are Proctor's overview, evaluation, terms."""
    found = {}
    for key, name in PAGE_KEYS:
        named = PurePosixPath(str(config.get(key) or ""))
        if named.parts[:1] != ("templates",) or ".." in named.parts:
            continue
        path = PurePosixPath("pages", *named.parts[1:])
        if (dest / path).is_file() and path.suffix.lower() in (".html", ".htm", ".md"):
            found[name] = str(path)
    return found


def _registration(config: dict[str, Any], pages: dict[str, str], path: Path) -> Registration | None:
    """``approval_required`` as the registration block; None when the configuration is silent."""
    if "approval_required" not in config:
        return None
    try:
        approval = flag(config["approval_required"], "approval_required")
    except BundleRefusedError:
        raise ConfigError(
            f"{config['approval_required']!r} is not true or false: write one",
            path=path,
            location="approval_required",
        ) from None
    return registration(approval, pages.get("terms"))


def build(config: dict[str, Any], root: Path, dest: Path, environment: str | None) -> Imported:
    """Import the EvalAI challenge folder ``root`` into ``dest`` (see the module docstring).

    ``config``: its ``challenge_config.yaml`` as read. ``environment``: the scoring programs'
    (a bundled name, ``host``, a folder declaring one); None: ``codabench``.
    """
    chosen = None if environment is None else choose_environment(environment, environment, dest)
    job = EvalaiImport(config, root, dest, chosen)
    document = job.build()
    pages: dict[str, str] = {}
    templates = root / "templates"
    if templates.is_dir():
        copy_inside(templates, dest / "pages")
        pages = _pages(job.config, dest)
    document = document.model_copy(
        update={
            "pages": pages or None,
            "registration": _registration(job.config, pages, job.config_path),
        }
    )
    return Imported(document, _result(document, dest, job.warnings), width=None)


def _result(document: ChallengeDocument, dest: Path, warnings: list[str]) -> ImportResult:
    """The import's answer, in the shape every format gives (``ImportResult``)."""
    return ImportResult(
        challenge=document.name,
        path=dest,
        format=FORMAT,
        phases=[
            {
                "name": phase.name,
                "title": phase.title,
                "tasks": phase.tasks,
                "opens": phase.opens,
                "closes": phase.closes,
            }
            for phase in document.phases
        ],
        tasks=[{"name": task.name, "title": task.name} for task in document.tasks],
        leaderboards=[
            {
                "phase": phase.name,
                "name": board.name,
                "metric": board.metrics[0],
                "columns": [{"key": metric} for metric in board.metrics],
            }
            for phase in document.phases
            for board in phase.leaderboards or []
        ],
        warnings=list(dict.fromkeys(warnings)),  # a board linked to N splits: said once
    )
