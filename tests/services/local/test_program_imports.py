"""Reading programs' imports and what an environment offers (``services.local.program_imports``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.challenges import bundled_root
from proctor.environments.store import BuiltEnvironment
from proctor.resolve import load_challenge
from proctor.services.local.authoring import new_challenge
from proctor.services.local.program_imports import (
    distribution_for,
    environment_modules,
    imported_modules,
    missing_imports,
    path_change_line,
)
from proctor.settings import Settings
from proctor.spec.bundled_environments import bundled_declaration, bundled_environment_names
from proctor.spec.environment import EnvironmentSpec

SOURCE = """\
import os, numpy.linalg as la
from sklearn.metrics import f1_score
from . import helpers
from .local import thing
try:
    import ujson as json
except ImportError:
    import json
try:
    import torch
except (ValueError, ModuleNotFoundError):
    torch = None
if sys.version_info[0] < 3:
    import cPickle as pickle
else:
    import pickle


def score():
    import yaml
    return yaml
"""


def test_imports_are_read_leaving_out_guarded_relative_and_version_tested_ones() -> None:
    assert imported_modules(SOURCE) == [
        ("os", 1), ("numpy", 1), ("sklearn", 2), ("json", 8), ("yaml", 20),
    ]  # fmt: skip


def test_an_ingestion_program_changing_sys_path_is_read_up_to_the_change() -> None:
    source = "import numpy\nfrom sys import path\npath.append(code)\nfrom model import model\n"
    assert path_change_line(source) == 3
    assert path_change_line("import sys\nsys.path[:0] = ['x']\n") == 2
    assert path_change_line("import numpy\n") is None


def test_the_fix_names_the_distribution_holding_the_module() -> None:
    found = {module: distribution_for(module) for module in ("yaml", "sklearn", "PIL", "cv2")}
    assert found == {
        "yaml": "pyyaml",
        "sklearn": "scikit-learn",
        "PIL": "pillow",
        "cv2": "opencv-python-headless",
    }
    assert distribution_for("pkg_resources") == "setuptools"
    assert distribution_for("filelock") == "filelock"


def test_a_lock_gives_its_distributions_import_names(tmp_path: Path) -> None:
    new = tmp_path / "challenge"
    new_challenge(new, "predictions")
    spec = load_challenge(new).environment_of(load_challenge(new).tasks[0].name)
    assert spec is not None
    offered = environment_modules(
        spec, Settings(work_root=tmp_path, env_root=tmp_path / "no-store")
    )
    assert {"numpy", "sklearn", "scipy", "pandas", "wfdb"} <= offered
    assert "yaml" not in offered and "pkg_resources" not in offered


def _bundled_spec(name: str, tmp_path: Path) -> EnvironmentSpec:
    """The bundled declaration ``name`` with its paths resolved, as a challenge naming it has."""
    spec, file = bundled_declaration(name, tmp_path / "challenge.yaml", "environment")
    python = spec.python
    assert python is not None
    folder = file.parent
    resolved = {"requirements": folder / python.requirements, "lock": folder / python.lock}
    lock = folder / spec.lock if spec.lock is not None else None
    return spec.model_copy(update={"python": python.model_copy(update=resolved), "lock": lock})


def test_the_codabench_environments_offer_pkg_resources_and_their_libraries(
    tmp_path: Path,
) -> None:
    store = Settings(work_root=tmp_path, env_root=tmp_path / "no-store")  # the locks alone
    for name in ("codabench-legacy", "codabench"):
        offered = environment_modules(_bundled_spec(name, tmp_path), store)
        assert {"pkg_resources", "setuptools", "sklearn", "yaml", "PIL", "numpy"} <= offered


@pytest.mark.slow
@pytest.mark.environment
def test_a_built_environment_offers_every_importable_name_of_its_tree(
    codabench_legacy_env: BuiltEnvironment, tmp_path: Path
) -> None:
    spec = _bundled_spec("codabench-legacy", tmp_path)
    from_lock = environment_modules(spec, Settings(work_root=tmp_path, env_root=tmp_path / "x"))
    built = environment_modules(spec, Settings.from_env())
    assert (
        codabench_legacy_env.rootfs / "usr/local/lib/python3.11/dist-packages/isympy.py"
    ).is_file()
    assert "isympy" in built and "isympy" not in from_lock  # sympy's own top-level module
    assert {"pkg_resources", "_distutils_hack", "mpl_toolkits", "dateutil"} <= built


def test_every_bundled_environment_offers_a_python_command() -> None:
    for name in bundled_environment_names():
        folder = bundled_root() / f"environment-{name}"
        declaration = (folder / "environment.yaml").read_text()
        assert "python-is-python3" in declaration, name
        lock = folder / "environment.lock"
        if lock.is_file():  # a published lock pins it too (the build reproduces the lock)
            assert "\ndeb python-is-python3=" in lock.read_text(), name


def test_a_challenge_on_the_host_is_not_checked(tmp_path: Path) -> None:
    folder = tmp_path / "challenge"
    new_challenge(folder, "python_model")
    (folder / "baseline" / "extra.py").write_text("import some_library_nobody_has\n")
    text = (folder / "challenge.yaml").read_text()
    assert "environment:" in text
    assert [gap.module for gap in missing_imports(load_challenge(folder))] == [
        "some_library_nobody_has"
    ]
    start = text.index("environment:")
    end = text.index("\ndisclosure")
    (folder / "challenge.yaml").write_text(text[:start] + "environment: host" + text[end:])
    assert missing_imports(load_challenge(folder)) == []


def test_a_physionet_sample_may_import_the_challenges_own_scripts(tmp_path: Path) -> None:
    """``helper_code`` comes from the challenge's ``scripts/``, which replace the entry's copies;
    a module found nowhere is still reported."""
    for challenge in (bundled_root() / "physionet2026", tmp_path / "new"):
        if not challenge.exists():
            new_challenge(challenge, "physionet_model")
        assert missing_imports(load_challenge(challenge)) == [], challenge.name
    (tmp_path / "new" / "baseline" / "extra.py").write_text("import helper_code_elsewhere\n")
    found = missing_imports(load_challenge(tmp_path / "new"))
    assert [gap.module for gap in found] == ["helper_code_elsewhere"]
