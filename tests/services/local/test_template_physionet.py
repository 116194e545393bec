"""The ``physionet_model`` template of ``proctor challenge new``: a PhysioNet 2020–2026 layout,
an entry shaped as the organizers' examples, text of its own (never the bundled challenge's),
and a ``challenge check`` that passes without running anything."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import yaml

from proctor.challenges import bundled_root
from proctor.services.local.authoring import new_challenge
from proctor.services.local.template_physionet import HIDDEN, TRAINING, physionet_model_files

PROCTOR = str(Path(sys.executable).with_name("proctor"))


def _functions(source: str | bytes) -> dict[str, list[str]]:
    tree = ast.parse(source)
    return {
        node.name: [arg.arg for arg in node.args.args]
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


def test_the_baseline_is_laid_out_as_a_physionet_entry() -> None:
    files = physionet_model_files()
    assert _functions(files["baseline/team_code.py"]) == {
        "train_model": ["data_folder", "model_folder", "verbose"],
        "load_model": ["model_folder", "verbose"],
        "run_model": ["model", "record", "data_folder", "verbose"],
    }
    dockerfile = str(files["baseline/Dockerfile"]).splitlines()
    steps = [line for line in dockerfile if line and not line.startswith("#")]
    assert steps == ["FROM python:3.10.1-buster", "RUN mkdir /challenge",
                     "COPY ./ /challenge", "WORKDIR /challenge",
                     "RUN pip install -r requirements.txt"]  # fmt: skip
    scripts = {"scripts/train_model.py", "scripts/run_model.py", "scripts/helper_code.py"}
    assert scripts <= set(files)
    assert not any(name.startswith("baseline/") and "_model.py" in name for name in files)


def test_its_requirements_are_pinned_as_the_declared_environment_pins_them() -> None:
    """The baseline's requirements.txt installs nothing: the reference lock holds each pin."""
    lock = (bundled_root() / "environment" / "requirements.lock").read_text()
    pins = str(physionet_model_files()["baseline/requirements.txt"]).split()
    assert pins and all(f"{pin} \\" in lock for pin in pins)


def test_the_data_layout_labels_training_alone_and_references_every_hidden_session() -> None:
    files = physionet_model_files()
    training = str(files["data/public/training/sessions.csv"]).splitlines()
    hidden = str(files["data/hidden/test/sessions.csv"]).splitlines()
    assert training[0] == "Patient,Age,Label" and hidden[0] == "Patient,Age"
    assert len(training) == len(TRAINING) + 1 and len(hidden) == len(HIDDEN) + 1
    labels = str(files["data/reference/test.csv"]).splitlines()[1:]
    assert sorted(line.split(",")[0] for line in labels) == sorted(HIDDEN)
    assert {line.split(",")[1] for line in labels} == {"0", "1"}  # both classes: AUROC defined
    assert all(f"data/hidden/test/signals/{patient}.txt" in files for patient in HIDDEN)


CONTRACT = ("train_model", "load_model", "run_model", "add_argument", "makedirs", "PROCTOR_",
            "except (")  # fmt: skip
"""What a line both share may name: the entry's calls, the scripts' flags, the program's
variables, a plain ``except``; never prose or a method."""


def test_its_text_is_its_own_not_the_bundled_physionet2026s() -> None:
    bundled = bundled_root() / "physionet2026"
    paths = [*bundled.glob("scripts/*.py"), *bundled.glob("scoring/*.py")]
    paths.append(bundled / "baseline" / "team_code.py")
    theirs = {
        line.strip()
        for path in paths
        for line in path.read_text().splitlines()
        if len(line.strip()) > 30
    }
    ours = {
        line.strip()
        for content in physionet_model_files().values()
        for line in str(content).splitlines()
        if len(line.strip()) > 30
    }
    shared = ours & theirs
    assert shared and all(any(word in line for word in CONTRACT) for line in shared), shared


def test_challenge_check_passes_on_a_new_physionet_challenge(tmp_path: Path) -> None:
    folder = tmp_path / "pn"
    new_challenge(folder, "physionet_model")
    environment = yaml.safe_load((folder / "challenge.yaml").read_text())["environment"]
    assert environment["entry_images"] == {
        "allow": True,
        "bases": {"python:3.10.1-buster": environment["name"]},
    }
    done = subprocess.run(
        [PROCTOR, "challenge", "check", str(folder), "--no-run"],
        env=dict(os.environ), capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ready" in done.stdout + done.stderr
