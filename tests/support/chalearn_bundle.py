"""Codabench bundles whose programs import what a bundled environment may lack, for the tests.

``make_chalearn_bundle``: a code bundle whose ingestion program is laid out as ChaLearn's
classic starting kits are: ``ingestion.py`` puts its own folder and the submission's on
``sys.path`` and imports ``data_io``, which imports ``pkg_resources`` (setuptools) at the top.
``make_importing_bundle``: a result bundle whose scoring program imports ``filelock`` and
``yaml``, under a ``docker_image`` of the caller's choice.
"""

from __future__ import annotations

from pathlib import Path

from bundle_fixtures import SCORE_JSON, V2_YAML, make_code_bundle, make_v2_bundle

DATA_IO_PY = """\
import os

import numpy as np
import pkg_resources
from pkg_resources import parse_version

assert parse_version(np.__version__) >= parse_version("1.9")


def show_version():
    return sorted(dist.project_name for dist in pkg_resources.working_set)


def read_data(folder):
    return [int(x) for x in np.loadtxt(os.path.join(folder, "x.txt"), dtype=int)]


def write(filename, labels):
    with open(filename, "w") as handle:
        handle.writelines(label + "\\n" for label in labels)
"""

INGESTION_PY = """\
import os
from sys import argv, path

input_dir, output_dir, program_dir, submission_dir = argv[1:5]
path.append(program_dir)
path.append(submission_dir)
import data_io
from model import model

print("libraries:", len(data_io.show_version()))
M = model()
data_io.write(os.path.join(output_dir, "predictions.txt"), M.predict(data_io.read_data(input_dir)))
"""

MODEL_PY = """\
class model:
    def predict(self, xs):
        return ["a" if x % 2 == 0 else "b" for x in xs]
"""

PREDICTED = "a\nb\na\nb\na\nb\n"
"""What ``MODEL_PY`` predicts on the bundle's inputs 0..5."""


def make_chalearn_bundle(root: Path) -> Path:
    """The toy code bundle (no ``docker_image``: Codabench's default) with ChaLearn's layout."""
    make_code_bundle(root)
    ingestion = root / "ingestion_program"
    (ingestion / "ingestion.py").write_text(INGESTION_PY)
    (ingestion / "data_io.py").write_text(DATA_IO_PY)
    (ingestion / "metadata.yaml").write_text(
        "command: python $ingestion_program/ingestion.py $input $output $ingestion_program "
        "$submission_program\n"
    )
    return root


def model_folder(root: Path) -> Path:
    """A ChaLearn-style code submission: ``model.py`` with its ``model`` class."""
    root.mkdir(parents=True)
    (root / "model.py").write_text(MODEL_PY)
    return root


IMPORTING_SCORE = "import filelock\nimport yaml\n" + SCORE_JSON
"""The toy scoring program, importing ``filelock`` (in no bundled environment) and ``yaml``."""


def make_importing_bundle(root: Path, image: str = "codalab/codalab-legacy:py37") -> Path:
    """The toy result bundle whose scoring program imports ``filelock`` and ``yaml``."""
    text = V2_YAML.replace("codalab/codalab-legacy:py37", image)
    return make_v2_bundle(root, score_py=IMPORTING_SCORE, yaml_text=text)
