"""The environment an imported challenge's programs run in: chosen, declared or the image's."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from proctor.errors import UsageError
from proctor.services.local.bundle_import.reading import read_yaml, text
from proctor.services.untrusted_tree import copy_inside

LEGACY_ENVIRONMENT = "codabench-legacy"
"""The environment of ``codalab/codalab-legacy:py37`` (numpy < 1.24), and of no image."""
MODERN_ENVIRONMENT = "codabench"
"""The environment of ``codalab/codalab-legacy:py312`` and newer images."""
LEGACY_TAG = re.compile(r"^(py2\d*|py3|py3[0-9]|latest)$")
"""Tags of a ``codalab-legacy`` image older than ``py310`` (``py312`` is the modern one)."""


def environment_for_image(image: Any) -> str:
    """The bundled environment standing for a Docker image (no image: Codabench's default)."""
    text = str(image or "").strip()
    if not text:
        return LEGACY_ENVIRONMENT
    name, _, tag = text.rpartition(":") if ":" in text.rsplit("/", 1)[-1] else (text, "", "latest")
    if "legacy" in name and LEGACY_TAG.match(tag):
        return LEGACY_ENVIRONMENT
    return MODERN_ENVIRONMENT


def choose_environment(choice: str | None, default: str, dest: Path) -> Any:
    """``host``, a bundled environment's name, or a folder holding ``environment.yaml``."""
    if choice is None:
        return default
    folder = Path(choice)
    if not folder.is_dir():
        return choice
    declaration = folder / "environment.yaml"
    if not declaration.is_file():
        raise UsageError(f"{folder}: no environment.yaml: give a folder that declares one")
    copy_inside(folder, dest / "environment")
    data = read_yaml(dest / "environment" / "environment.yaml")
    return _rebased(data, "environment")


def _rebased(data: Any, prefix: str) -> Any:
    """The declaration's relative file paths, made relative to the challenge folder."""
    if not isinstance(data, dict):
        return data
    rebased = dict(data)
    for key in ("lock",):
        if isinstance(rebased.get(key), str) and not Path(rebased[key]).is_absolute():
            rebased[key] = f"{prefix}/{rebased[key]}"
    python = rebased.get("python")
    if isinstance(python, dict):
        rebased["python"] = {
            key: f"{prefix}/{value}"
            if key in ("requirements", "lock")
            and isinstance(value, str)
            and not Path(value).is_absolute()
            else value
            for key, value in python.items()
        }
    return rebased


def describe_image(spec: dict[str, Any], *, advise: bool) -> str:
    """The bundle's image as the environment warning names it; ``advise``: say what to do."""
    image = _image_name(spec)
    if not image:
        return "no docker_image: Codabench's default"
    if advise and "codalab/codalab-legacy" not in image:
        return (
            f"docker_image {image}: not one of Codabench's images, whose libraries Proctor "
            "cannot know; if its programs import more than numpy, scipy, scikit-learn, pandas "
            "and matplotlib, import again with `--environment DIR` declaring them"
        )
    return f"docker_image {image}"


def default_environment(spec: dict[str, Any]) -> str:
    """The environment standing for the bundle's image (Codabench's default for none)."""
    return environment_for_image(_image_name(spec))


def _image_name(spec: dict[str, Any]) -> str:
    """The bundle's ``docker_image`` (CodaLab: ``competition_docker_image``), "" for none."""
    for key in ("docker_image", "competition_docker_image"):
        if spec.get(key):
            return text(spec[key], key)
    return ""


def describe_choice(chosen: Any) -> str:
    """The chosen environment as the import's first warning names it."""
    if isinstance(chosen, dict):
        return f"the declared environment {chosen.get('name', '')!r} (environment/)"
    return str(chosen)
