"""The libraries the bundled ``codabench-legacy`` and ``codabench`` environments add, sandboxed.

Scoring programs written for ``codalab/codalab-legacy:py37`` import whatever that image's
Anaconda 2019.07 shipped; EvalAI evaluation scripts, which run in ``codabench`` by default, import
what EvalAI's worker image adds (pycocotools, networkx, tqdm, requests). For each environment one
EvalAI evaluation script imports every library it adds beyond the scientific core, calls each once
(on that environment's numpy and pandas), prints the versions it imported on one ``LIBRARIES``
line, then scores the upload: one sandboxed scoring run covers them all, and the versions must be
the environment's locked ones.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest
from evalai_challenge import make_evalai_challenge, make_upload

from proctor.environments.store import BuiltEnvironment
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import RunStatus

LEGACY_MODULES = {
    "nltk": "nltk", "h5py": "h5py", "skimage": "scikit-image", "tifffile": "tifffile",
    "imageio": "imageio", "seaborn": "seaborn", "statsmodels": "statsmodels",
    "networkx": "networkx", "sympy": "sympy", "jinja2": "jinja2", "six": "six", "tqdm": "tqdm",
    "openpyxl": "openpyxl", "xlrd": "xlrd", "lxml": "lxml", "bs4": "beautifulsoup4",
    "requests": "requests", "numexpr": "numexpr", "pkg_resources": "setuptools",
}  # fmt: skip
"""Module imported → the wheel that holds it."""

LEGACY_EXERCISE = """\
import bs4, h5py, imageio, jinja2, lxml.etree, networkx, nltk, numexpr, openpyxl, requests
import seaborn, six, skimage.metrics, statsmodels.formula.api, sympy, tifffile, tqdm, xlrd
import pkg_resources

image = np.random.RandomState(0).rand(8, 8)
assert skimage.metrics.structural_similarity(image, image, data_range=1.0) == 1.0
buffer = io.BytesIO()
tifffile.imwrite(buffer, (image * 255).astype(np.uint8))
assert tifffile.imread(io.BytesIO(buffer.getvalue())).shape == (8, 8)
png = imageio.imwrite("<bytes>", (image * 255).astype(np.uint8), format="png")
assert imageio.v2.imread(png).shape == (8, 8)
with h5py.File(io.BytesIO(), "w") as handle:
    handle["x"] = np.arange(3.0)
frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [1.1, 1.9, 3.2, 3.9]})
fit = statsmodels.formula.api.ols("y ~ x", frame).fit()
assert abs(fit.params["x"] - 0.97) < 1e-9
assert networkx.from_numpy_matrix(np.matrix([[0, 1], [1, 0]])).number_of_edges() == 1
assert str(sympy.diff(sympy.Symbol("x") ** 2)) == "2*x"
assert jinja2.Template("{{ a }}").render(a=1) == "1" and six.PY3
assert nltk.tokenize.wordpunct_tokenize("a b.c") == ["a", "b", ".", "c"]
assert numexpr.evaluate("sum(a * 2)", {"a": np.arange(4.0)}) == 12.0
sheet = io.BytesIO()
frame.to_excel(sheet, index=False)
assert pd.read_excel(io.BytesIO(sheet.getvalue())).shape == (4, 2)
table = "<table><tr><th>a</th></tr><tr><td>1</td></tr></table>"
assert pd.read_html(io.StringIO(table))[0].shape == (1, 1)
assert bs4.BeautifulSoup("<p>a</p>", "lxml").p.text == "a"
assert sum(tqdm.tqdm(range(3), disable=True)) == 3
assert seaborn.color_palette()[0] and requests.Request("GET", "http://x").method == "GET"
assert xlrd.__version__ and openpyxl.__version__ and lxml.etree.LXML_VERSION
assert pkg_resources.parse_version("1.10") > pkg_resources.parse_version("1.9")
"""
"""Imports and calls each library (the script has ``io``, ``np`` and ``pd`` imported)."""

EVALAI_MODULES = {"pycocotools": "pycocotools", "networkx": "networkx", "tqdm": "tqdm",
           "requests": "requests", "pkg_resources": "setuptools"}  # fmt: skip
"""Module imported → the wheel that holds it."""

EVALAI_EXERCISE = """\
import networkx, pkg_resources, requests, tqdm
from pycocotools import mask
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

truth = COCO()
truth.dataset = {
    "images": [{"id": 1, "width": 64, "height": 64}],
    "categories": [{"id": 1, "name": "thing"}],
    "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [8, 8, 40, 40],
                     "area": 1600, "iscrowd": 0}],
}
truth.createIndex()
found = truth.loadRes([{"image_id": 1, "category_id": 1, "bbox": [8, 8, 40, 40], "score": 0.9}])
evaluation = COCOeval(truth, found, "bbox")
evaluation.evaluate()
evaluation.accumulate()
evaluation.summarize()
assert abs(evaluation.stats[0] - 1.0) < 1e-9
square = np.zeros((16, 16), dtype=np.uint8, order="F")
square[4:12, 4:12] = 1
assert mask.area(mask.encode(square)) == 64
graph = networkx.path_graph(4)
assert networkx.shortest_path_length(graph, 0, 3) == 3
assert networkx.to_numpy_array(graph).sum() == 6.0
assert networkx.to_scipy_sparse_array(graph).nnz == 6
assert not hasattr(networkx, "to_numpy_matrix")
shown = io.StringIO()
assert sum(tqdm.tqdm(range(3), file=shown)) == 3 and "3/3" in shown.getvalue()
prepared = requests.Request("GET", "http://example.org/a b", params={"q": "é"}).prepare()
assert prepared.url == "http://example.org/a%20b?q=%C3%A9"
answer = requests.models.Response()
answer._content = '{"score": 1}'.encode("utf-16")
assert answer.json() == {"score": 1} and answer.apparent_encoding.lower().startswith("utf")
assert pkg_resources.parse_version("1.10") > pkg_resources.parse_version("1.9")
"""
"""Imports and calls each library (the script has ``io``, ``np`` and ``pd`` imported)."""

LIBRARIES_SCRIPT = """\
import importlib.metadata
import io
import json

import numpy as np
import pandas as pd

MODULES = %s


def exercise():
%s
    versions = {}
    for module, wheel in MODULES.items():
        version = getattr(__import__(module), "__version__", None)
        versions[module] = version or importlib.metadata.version(wheel)
    return versions


def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):
    print("LIBRARIES " + json.dumps(exercise()))
    truth = json.load(open(test_annotation_file))["train_split"]
    guesses = json.load(open(user_submission_file))
    right = sum(guesses.get(key) == label for key, label in truth.items())
    return {"result": [{"train_split": {"Accuracy": right / len(truth), "Errors": 0}}]}
"""


def libraries_script(modules: Mapping[str, str], exercise: str) -> str:
    """The evaluation script running ``exercise`` (unindented) and reporting ``modules``.

    ``modules`` maps each module the script imports to the wheel that holds it; a module
    without ``__version__`` reports its wheel's installed version."""
    body = textwrap.indent(textwrap.dedent(exercise).strip("\n"), "    ")
    return LIBRARIES_SCRIPT % (json.dumps(dict(sorted(modules.items()))), body)


def imported_versions(shared_dir: Path, environment: str, script: str) -> dict[str, str]:
    """Score the toy upload with ``script`` imported into ``environment``; its module versions.

    The run must score (the log is the message otherwise) with the expected accuracy."""
    source = make_evalai_challenge(shared_dir / "source", main_py=script)
    challenge = shared_dir / "challenge"
    import_challenge(source, challenge, environment)
    settings = Settings(work_root=shared_dir / "runs")
    request = RunRequest(make_upload(shared_dir / "upload"), str(challenge), "dev", keep=True)
    report = run_entry(request, settings)
    assert report.run_dir is not None
    log = (report.run_dir / "scoring-dev-train-split.log").read_text()
    assert report.status is RunStatus.SCORED, log
    assert report.scores["dev-train-split"]["Accuracy"] == 0.5
    line = next(text for text in log.splitlines() if text.startswith("LIBRARIES "))
    imported: dict[str, str] = json.loads(line.removeprefix("LIBRARIES "))
    return imported


def locked_versions(built: BuiltEnvironment, modules: Mapping[str, str]) -> dict[str, str]:
    """Each module of ``modules`` → the version the environment's lock gives its wheel."""
    locked = {name.lower(): version for name, (version, _) in built.manifest.wheels.items()}
    return {module: locked[wheel] for module, wheel in modules.items()}


CASES = {
    "codabench-legacy": ("codabench_legacy_env", LEGACY_MODULES, LEGACY_EXERCISE),
    "codabench": ("codabench_env", EVALAI_MODULES, EVALAI_EXERCISE),
}
"""Environment → its session fixture (tests/support/environment_fixtures.py), modules, exercise."""


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.environment
@pytest.mark.parametrize("environment", sorted(CASES))
def test_the_added_libraries_import_and_run_in_the_sandbox(
    shared_dir: Path, environment: str, request: pytest.FixtureRequest
) -> None:
    fixture, modules, exercise = CASES[environment]
    built: BuiltEnvironment = request.getfixturevalue(fixture)
    imported = imported_versions(shared_dir, environment, libraries_script(modules, exercise))
    assert imported == locked_versions(built, modules)
