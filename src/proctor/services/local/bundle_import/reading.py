"""Reading a bundle: its folder or zip, its YAML, its scalars, dates and files.

A bundle (Codabench v2, CodaLab v1/v1.5, EvalAI) is read from a folder or a zip, untidy as
real bundles are (CRLF line endings, duplicate YAML keys: the last wins, as PyYAML reads them).
What would change results is a :class:`BundleRefusedError` naming the YAML key.
"""

from __future__ import annotations

import re
import zipfile
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


class BundleRefusedError(ConfigError):
    """The bundle cannot run on Proctor as it would on its platform: ``location`` names the key."""


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


def flag(value: Any, location: str) -> bool:
    """A bundle's yes/no (``true``, ``False``, ``"true"``, ``1``); anything else is refused."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        return value.strip().lower() in ("true", "yes")
    raise BundleRefusedError(f"{value!r} is not true or false: write one", location=location)


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


def bundle_file(bundle: Path, reference: str) -> Path | None:
    """Where ``reference`` (``/`` or a backslash between parts) is in ``bundle``; None: outside."""
    relative = PurePosixPath(str(reference).replace("\\", "/"))
    if relative.is_absolute() or ".." in relative.parts:
        return None
    return bundle.joinpath(*relative.parts)


def materialize(bundle: Path, reference: str, dest: Path, key: str) -> Path:
    """Copy the folder (or unpack the zip) ``reference`` names in the bundle to ``dest``.

    A name without ``.zip`` found only as ``NAME.zip`` (or the reverse) is accepted.
    """
    found = bundle_file(bundle, reference)
    if found is None:
        raise BundleRefusedError(f"{reference!r} must be a path inside the bundle", location=key)
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
