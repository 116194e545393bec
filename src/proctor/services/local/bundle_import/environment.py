"""The environment an imported challenge's programs run in: chosen, declared or the image's."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from proctor.errors import UsageError
from proctor.services.local.bundle_import.reading import read_yaml, text
from proctor.services.local.program_imports import distribution_for, third_party_modules
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


def describe_image(spec: dict[str, Any]) -> str:
    """The bundle's image as the environment warning names it."""
    image = _image_name(spec)
    return f"docker_image {image}" if image else "no docker_image: Codabench's default"


def default_environment(spec: dict[str, Any]) -> str:
    """The environment standing for the bundle's image (Codabench's default for none)."""
    return environment_for_image(_image_name(spec))


def _image_name(spec: dict[str, Any]) -> str:
    """The bundle's ``docker_image`` (CodaLab: ``competition_docker_image``), "" for none."""
    for key in ("docker_image", "competition_docker_image"):
        if spec.get(key):
            return text(spec[key], key)
    return ""


def known_image(spec: dict[str, Any]) -> bool:
    """True for no image or one of Codabench's own (``codalab/...``), which Proctor stands for."""
    image = _image_name(spec)
    return not image or image.startswith("codalab/")


SCAFFOLD_YAML = """\
# Scaffolded by `proctor challenge import` for the bundle's docker_image {image}, whose
# libraries Proctor cannot know: Debian 12's python3 (also as `python`) and the third-party
# libraries its programs import (requirements.in lists them). Edit both to hold what the image
# held, then lock and build it once: `proctor env lock DEST`, `proctor env build DEST`
# (docs/environments.md).
name: {name}
debian: {{suite: bookworm, packages: [python3, python-is-python3]}}
python:
  requirements: requirements.in
  lock: requirements.lock
lock: environment.lock
"""

SCAFFOLD_REQUIREMENTS = """\
# Scaffolded by `proctor challenge import` for the image {image}: one distribution for each
# third-party module that its programs and samples import ({programs}). Add what else the
# image held that they need (pin versions where results depend on them), then write the lock
# with `proctor env lock DEST`.
"""


def scaffold_environment(spec: dict[str, Any], dest: Path) -> dict[str, Any]:
    """Declare ``dest/environment/`` for an image Proctor does not know; the declaration.

    Its ``requirements.in`` lists a distribution per third-party module the imported programs
    (``programs/``) and samples (``baseline/``, ``kit/solutions/``) import; no lock is written:
    the organizer edits the files, then locks and builds the environment once.
    """
    image = _image_name(spec)
    folders = sorted(path for path in (dest / "programs").glob("*") if path.is_dir())
    samples = [dest / "baseline", *sorted((dest / "kit" / "solutions").glob("*"))]
    modules = third_party_modules([*folders, *samples], [*folders, *samples, dest / "kit"])
    name = ("image-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", image).strip("-"))[:64]
    folder = dest / "environment"
    folder.mkdir(exist_ok=True)
    (folder / "environment.yaml").write_text(
        SCAFFOLD_YAML.format(image=image, name=name), encoding="utf-8"
    )
    shown = ", ".join(path.relative_to(dest).as_posix() for path in folders) or "none"
    lines = sorted({distribution_for(module) for module in modules})
    header = SCAFFOLD_REQUIREMENTS.format(image=image, programs=shown)
    listed = "".join(f"{line}\n" for line in lines)
    (folder / "requirements.in").write_text(header + listed, encoding="utf-8")
    declared: dict[str, Any] = _rebased(read_yaml(folder / "environment.yaml"), "environment")
    return declared


def describe_scaffold(spec: dict[str, Any], chosen: dict[str, Any]) -> str:
    """The import's first warning for a scaffolded environment: what it holds, what to do."""
    return (
        f"environment: {describe_choice(chosen)}, scaffolded for docker_image "
        f"{_image_name(spec)}, which Proctor does not know: Debian 12's python3 and the "
        "libraries its programs import (environment/requirements.in); edit it to hold what "
        "the image held, then lock and build it once (below)"
    )


def describe_choice(chosen: Any) -> str:
    """The chosen environment as the import's first warning names it."""
    if isinstance(chosen, dict):
        return f"the declared environment {chosen.get('name', '')!r} (environment/)"
    return str(chosen)
