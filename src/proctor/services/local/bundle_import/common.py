"""What the bundle importers share: reading a bundle, dates, names, programs, the result.

A bundle (Codabench v2, CodaLab v1/v1.5, EvalAI) is read from a folder or a zip, untidy as
real bundles are (CRLF line endings, duplicate YAML keys: the last wins, as PyYAML reads them).
Each importer maps it to a ``challenge.yaml`` mapping plus files copied under DEST; what it
cannot map is a warning, or a :class:`BundleRefusedError` naming the YAML key when it would change
results.
"""

from __future__ import annotations

import re
import shlex
import shutil
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from proctor.errors import ConfigError
from proctor.formats.bounded_yaml import (
    BUNDLE_BOUNDS,
    BoundedLoader,
    YamlBounds,
    YamlBoundsError,
    YamlDocumentError,
    read_file,
)
from proctor.services.local.bundle_import.unzip import current_budget, safe_extract
from proctor.services.untrusted_tree import copy_inside
from proctor.spec.display import PAGE_SUFFIXES, PageName

LEGACY_ENVIRONMENT = "codabench-legacy"
"""The environment of ``codalab/codalab-legacy:py37`` (numpy < 1.24), and of no image."""
MODERN_ENVIRONMENT = "codabench"
"""The environment of ``codalab/codalab-legacy:py312`` and newer images."""
LEGACY_TAG = re.compile(r"^(py2\d*|py3|py3[0-9]|latest)$")
"""Tags of a ``codalab-legacy`` image older than ``py310`` (``py312`` is the modern one)."""

CODABENCH_MOUNTS = {
    "program": "/app/program",
    "reference": "/app/input/ref",
    "outputs": "/app/input/res",
    "scores": "/app/output",
    "cases": "/app/cases.txt",
    "output": "/app/check/output",
    "shared": "/app/shared",
}
"""A scoring program's mount points as Codabench's compute worker lays the container out."""
SCORES_FILES = ("scores.json", "scores.txt")
"""What a Codabench scoring program writes, tried in this order (as the worker reads them)."""


class BundleRefusedError(ConfigError):
    """The bundle cannot run on Proctor as it would on its platform: ``location`` names the key."""


@dataclass
class ImportResult:
    """What an import made: the ``--json`` answer of ``proctor challenge import``."""

    challenge: str
    path: Path
    format: str
    phases: list[dict[str, Any]] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)
    leaderboards: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The JSON object the CLI prints."""
        return {
            "challenge": self.challenge,
            "path": str(self.path),
            "format": self.format,
            "phases": self.phases,
            "tasks": self.tasks,
            "leaderboards": self.leaderboards,
            "warnings": self.warnings,
        }


class BundleLoader(BoundedLoader):
    """The bounded safe loader, also reading the ``!!python/unicode`` and ``!!python/str`` tags.

    CodaLab v1 (Python 2) wrote them when it exported a competition; they are plain strings.
    """


def _plain_string(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    return loader.construct_yaml_str(node)


for _tag in ("tag:yaml.org,2002:python/unicode", "tag:yaml.org,2002:python/str"):
    BundleLoader.add_constructor(_tag, _plain_string)

METADATA_BOUNDS = YamlBounds(max_bytes=64 * 1024, max_nodes=10_000, max_depth=20)
"""A program's ``metadata`` at most (Codabench's are a few lines); a bundle's YAML files take
:class:`YamlBounds`' defaults (4 MiB, 100,000 values once aliases are expanded, 100 levels)."""


def read_yaml(path: Path, bounds: YamlBounds = BUNDLE_BOUNDS) -> Any:
    """A bundle's YAML file: UTF-8 (a BOM allowed), CRLF accepted, duplicate keys: the last wins.

    Read within ``bounds``: a larger file, or a document whose aliases expand past them
    (a "billion laughs"), is refused before any value is built.
    """
    try:
        return read_file(path, bounds, BundleLoader)
    except YamlBoundsError as err:
        raise ConfigError(str(err), path=path) from None
    except YamlDocumentError as err:
        raise ConfigError(f"not a YAML document: {err}", path=path) from None
    except OSError as err:
        raise ConfigError(f"cannot be read ({err.strerror})", path=path) from None


def text(value: Any, location: str) -> str:
    """A bundle's scalar as text ("" for none); a list or a mapping is refused naming the key."""
    if value is None:
        return ""
    if not isinstance(value, str | int | float | date):
        raise BundleRefusedError(f"must be text, not {_kind(value)}", location=location)
    return str(value)


def whole(value: Any, location: str) -> int:
    """A bundle's whole number (``3``, ``"3"``); anything else is refused naming the key."""
    try:
        if isinstance(value, str | int | float):
            return int(value)
    except (ValueError, OverflowError):
        pass
    raise BundleRefusedError(
        f"{_kind(value)} is not a whole number: write one, e.g. 3", location=location
    )


def number(value: Any, location: str) -> float:
    """A bundle's number (``1.5``, ``"60"``); anything else is refused naming the key."""
    try:
        if isinstance(value, str | int | float):
            return float(value)
    except ValueError:
        pass
    raise BundleRefusedError(
        f"{_kind(value)} is not a number: write one, e.g. 60", location=location
    )


def _kind(value: Any) -> str:
    """What a refused value is, shortly (a list or mapping is not printed)."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | set | tuple):
        return "a list"
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:39] + "..."


def unpack_source(source: Path, scratch: Path) -> Path:
    """The bundle's folder, under the empty folder ``scratch``: ``source`` unpacked or copied.

    A zip is unpacked within the import's budget (:mod:`.unzip`). A folder is copied with its
    links resolved inside it (``services.untrusted_tree``): a link leaving it, pointing to
    nothing or looping is refused, naming it, so every later read of the bundle is of its
    own files. A folder or zip whose content is one folder is that folder (bundles are often
    zipped that way).
    """
    if source.is_dir():
        budget = current_budget().limits.max_total_bytes
        copy_inside(source, scratch, skip=_vcs, linked_bytes=budget, exist_ok=True)
        return _descend(scratch)
    if not zipfile.is_zipfile(source):
        raise ConfigError("not a bundle: give a folder or a zip file", path=source)
    safe_extract(source, scratch)
    return _descend(scratch)


def _vcs(name: str) -> bool:
    """A version control folder, never part of what a bundle names."""
    return name in (".git", ".hg", ".svn")


def _descend(folder: Path) -> Path:
    """``folder``, or its only sub-folder when it holds nothing else (a zipped folder)."""
    items = [item for item in folder.iterdir() if item.name != "__MACOSX"]
    if len(items) == 1 and items[0].is_dir():
        return items[0]
    return folder


def materialize(bundle: Path, reference: str, dest: Path, key: str) -> Path:
    """Copy the folder (or unpack the zip) ``reference`` names in the bundle to ``dest``.

    A name without ``.zip`` found only as ``NAME.zip`` (or the reverse) is accepted.
    """
    relative = PurePosixPath(str(reference).replace("\\", "/"))
    if relative.is_absolute() or ".." in relative.parts:
        raise BundleRefusedError(f"{reference!r} must be a path inside the bundle", location=key)
    found = bundle.joinpath(*relative.parts)
    candidates = [found, found.with_name(found.name + ".zip")]
    if found.suffix == ".zip":
        candidates.append(found.with_suffix(""))
    for candidate in candidates:
        if candidate.is_dir():
            copy_inside(candidate, dest)
            return dest
        if candidate.is_file() and zipfile.is_zipfile(candidate):
            safe_extract(candidate, dest)
            return dest
    raise BundleRefusedError(_missing(reference, found), location=key)


UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)


def _missing(reference: str, found: Path) -> str:
    """Why ``reference`` is not a folder or zip of the bundle, and what to do."""
    if found.is_file():
        return (
            f"{reference!r} is a file, not a folder or a zip: the platform unzips every "
            "dataset; zip it (the program then finds it at the top of its folder) and name "
            "the zip here"
        )
    if UUID.match(str(reference).strip()):
        return (
            f"{reference!r} is the key of a dataset stored on the platform, not a file of the "
            "bundle: download that dataset, add it to the bundle as a folder or zip, and name "
            "it here"
        )
    return (
        f"{reference!r} is neither a folder nor a zip of the bundle: add it to the bundle "
        "(a dataset stored on the platform is not part of the bundle), or correct the name"
    )


EXAMPLE_COMMAND = "command: python $program/score.py $input $output"


def program_command(
    folder: Path, key: str, *, scoring: bool, input_data: bool = False, during_scoring: bool = False
) -> list[str]:
    """The argv of a program folder's ``metadata``/``metadata.yaml`` ``command``, substituted.

    The variables are replaced as Codabench's compute worker replaces them (see
    :func:`substitute`), then the line is split without a shell. A ``python`` command runs
    ``python3``.
    """
    for name in ("metadata.yaml", "metadata"):
        if (folder / name).is_file():
            try:
                metadata = read_yaml(folder / name, METADATA_BOUNDS)
            except ConfigError as err:  # named by its key: DEST is removed on a refusal
                raise BundleRefusedError(
                    f"the program's {name}: {err.message}", location=key
                ) from None
            break
    else:
        raise BundleRefusedError(
            "the program has no `metadata` file (at its top, or one folder down): add one "
            f"saying how to run it, e.g. `{EXAMPLE_COMMAND}`",
            location=key,
        )
    command = metadata.get("command") if isinstance(metadata, dict) else None
    if not isinstance(command, str) or not command.strip():
        raise BundleRefusedError(
            f"the program's {name} has no `command`: add one, e.g. `{EXAMPLE_COMMAND}`",
            location=key,
        )
    line = substitute(
        command, scoring=scoring, input_data=input_data, during_scoring=during_scoring
    )
    argv = shlex.split(line)
    if argv and argv[0] == "python":
        argv[0] = "python3"
    return argv


def substitute(
    command: str, *, scoring: bool, input_data: bool = False, during_scoring: bool = False
) -> str:
    """``command`` with the compute worker's ``$program``, ``$input``... paths (longest first).

    ``scoring``: the run is in the scoring step (``$predictions`` is ``/app/input/res``, else
    ``/app/output``); ``input_data``: an ingestion program's (``$input`` is
    ``/app/input_data``, else ``/app/input``); ``during_scoring``: the task runs its ingestion
    during scoring, where the worker replaces ``$program`` by ``/app/ingestion_program`` in
    both programs' commands (and mounts nothing there).
    """
    table = {
        "$ingestion_program": "/app/program",
        "$submission_program": "/app/ingested_program",
        "$predictions": "/app/input/res" if scoring else "/app/output",
        "$program": "/app/ingestion_program" if during_scoring and scoring else "/app/program",
        "$hidden": "/app/input/ref",
        "$shared": "/app/shared",
        "$output": "/app/output",
        "$input": "/app/input_data" if input_data or not scoring else "/app/input",
        "$tmp": "/app/output",
    }
    pattern = re.compile("|".join(re.escape(key) for key in table))
    return pattern.sub(lambda match: table[match.group(0)], command)


DATE_PATTERNS = (
    "%Y-%m-%d",  # 2012-10-2: one digit, which ISO 8601 does not allow
    "%Y-%m-%d %H:%M",
    "%Y-%m-%d %H:%M:%S",
    "%m-%d-%Y",
    "%d-%m-%Y",
    "%m/%d/%Y",
    "%Y/%m/%d",
    "%m-%d-%Y %H:%M",
    "%m/%d/%Y %H:%M",
)
"""What bundles write besides ISO 8601 (Codabench reads them with dateutil: month first)."""


def parse_date(value: Any, key: str) -> datetime | None:
    """A bundle's date or datetime (``2026-01-01``, ``1-1-2026``, ISO 8601), in UTC if naive."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        found = value
    elif isinstance(value, date):
        found = datetime.combine(value, time())
    else:
        found = _date_text(text(value, key).strip(), key)
    return found if found.utcoffset() is not None else found.replace(tzinfo=UTC)


def _date_text(text: str, key: str) -> datetime:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        pass
    for pattern in DATE_PATTERNS:
        try:
            return datetime.strptime(text, pattern)
        except ValueError:
            continue
    raise BundleRefusedError(f"{text!r} is not a date (write 2026-01-01)", location=key)


def derive_name(title: str, taken: set[str], fallback: str) -> str:
    """A Proctor name from a bundle's title (``Development Phase`` → ``development-phase``)."""
    base = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:56] or fallback
    name, number = base, 2
    while name in taken:
        name, number = f"{base}-{number}", number + 1
    taken.add(name)
    return name


def environment_for_image(image: Any) -> str:
    """The bundled environment standing for a Docker image (no image: Codabench's default)."""
    text = str(image or "").strip()
    if not text:
        return LEGACY_ENVIRONMENT
    name, _, tag = text.rpartition(":") if ":" in text.rsplit("/", 1)[-1] else (text, "", "latest")
    if "legacy" in name and LEGACY_TAG.match(tag):
        return LEGACY_ENVIRONMENT
    return MODERN_ENVIRONMENT


def is_metric_name(key: str) -> bool:
    """True when a score key is a Proctor metric name as it is (letters, digits, ``_``)."""
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9_]{0,63}$", key)) and key != "cases"


def metric_name(label: str, taken: set[str]) -> str:
    """A metric name for a score key or label that is none (``F1-score`` → ``F1_score``; unique)."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", label).strip("_") or "metric"
    if not name[0].isalpha():
        name = f"m_{name}"
    name = name[:60]
    if name == "cases":
        name = "cases_"
    base, index = name, 2
    while name in taken:
        name, index = f"{base}_{index}", index + 1
    taken.add(name)
    return name


PAGE_WORDS: tuple[tuple[PageName, tuple[str, ...]], ...] = (
    ("terms", ("terms", "rules", "condition")),
    ("evaluation", ("evaluat", "scoring", "metric")),
    ("data", ("data",)),
    ("overview", ("overview", "description", "home", "welcome", "about")),
)
"""The words of a bundle page's title (or CodaLab ``html:`` key) that name Proctor's page."""


def page_name(title: str) -> PageName | None:
    """Which of Proctor's pages (``spec.display``) a bundle page of this title is, or None."""
    lowered = title.lower()
    for name, words in PAGE_WORDS:
        if any(word in lowered for word in words):
            return name
    return None


def copy_pages(
    bundle: Path, pages: list[tuple[str, str]], dest: Path, warnings: list[str]
) -> dict[PageName, str]:
    """Copy the bundle's pages (title, file) under ``dest/pages``; the ``pages:`` mapping.

    A page is shown as the overview, data, evaluation or terms page its title names (the
    first unnamed one as the overview when no page is called so); any other page is copied
    and left out of the mapping with a warning.
    """
    found: dict[PageName, str] = {}
    unnamed: list[tuple[str, str]] = []
    for title, reference in pages:
        relative = PurePosixPath(str(reference).replace("\\", "/"))
        source = bundle.joinpath(*relative.parts)
        if relative.is_absolute() or ".." in relative.parts or not source.is_file():
            warnings.append(f"page {title!r} ({reference}): no such file in the bundle: left out")
            continue
        if relative.suffix.lower() not in PAGE_SUFFIXES:
            warnings.append(f"page {title!r} ({reference}): neither Markdown nor HTML, left out")
            continue
        target = dest / "pages" / relative.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        name, path = page_name(title), f"pages/{relative.name}"
        if name is not None and found.get(name) == path:
            continue  # the same file named twice (v2's `terms:` and a Terms page): shown
        if name is None or name in found:
            unnamed.append((title, path))
        else:
            found[name] = path
    if unnamed and "overview" not in found:
        found["overview"] = unnamed.pop(0)[1]
    for title, path in unnamed:
        warnings.append(
            f"page {title!r}: copied to {path} but not shown (Proctor shows the overview, "
            "data, evaluation and terms pages)"
        )
    return found


def flag(value: Any, location: str) -> bool:
    """A bundle's yes/no (``true``, ``False``, ``"true"``, ``1``); anything else is refused."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        return value.strip().lower() in ("true", "yes")
    raise BundleRefusedError(f"{value!r} is not true or false: write one", location=location)


def registration_block(approval: bool | None, pages: dict[PageName, str]) -> dict[str, Any] | None:
    """The ``registration:`` block of an imported bundle (``spec.registration``), or None.

    ``approval``: whether an organizer approves each participant (Codabench's
    ``registration_auto_approve`` negated, EvalAI's ``approval_required``); None when the
    bundle does not say, which keeps Proctor's default (no registration). The imported terms
    page, if any, is the terms people accept.
    """
    if approval is None:
        return None
    block: dict[str, Any] = {"mode": "approval" if approval else "open"}
    if "terms" in pages:
        block["terms"] = pages["terms"]
    return block
