"""The Anaconda 2019.07 libraries of the bundled ``codabench-legacy`` environment, in its sandbox.

Scoring programs written for ``codalab/codalab-legacy:py37`` import whatever that image's
Anaconda shipped. One evaluation script imports every library the environment adds beyond the
scientific core, calls each once (numpy 1.23.5 and pandas 1.5.3 underneath), and prints the
versions it imported: one scoring run in the sandbox covers them all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalai_challenge import make_evalai_challenge, make_upload
from proctor.environments.store import BuiltEnvironment
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import RunStatus

MODULES = {
    "nltk": "nltk", "h5py": "h5py", "skimage": "scikit-image", "tifffile": "tifffile",
    "imageio": "imageio", "seaborn": "seaborn", "statsmodels": "statsmodels",
    "networkx": "networkx", "sympy": "sympy", "jinja2": "jinja2", "six": "six", "tqdm": "tqdm",
    "openpyxl": "openpyxl", "xlrd": "xlrd", "lxml": "lxml", "bs4": "beautifulsoup4",
    "requests": "requests", "numexpr": "numexpr",
}  # fmt: skip
"""Module imported → the wheel that holds it."""

LIBRARIES_SCRIPT = """\
import io
import json

import numpy as np
import pandas as pd

MODULES = %s


def exercise():
    import bs4, h5py, imageio, jinja2, lxml.etree, networkx, nltk, numexpr, openpyxl, requests
    import seaborn, six, skimage.metrics, statsmodels.formula.api, sympy, tifffile, tqdm, xlrd

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
    return {name: __import__(name).__version__ for name in MODULES}


def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):
    print("LIBRARIES " + json.dumps(exercise()))
    truth = json.load(open(test_annotation_file))["train_split"]
    guesses = json.load(open(user_submission_file))
    right = sum(guesses.get(key) == label for key, label in truth.items())
    return {"result": [{"train_split": {"Accuracy": right / len(truth), "Errors": 0}}]}
""" % sorted(MODULES)  # noqa: UP031 - the script holds braces of its own


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.environment
def test_codabench_legacy_imports_the_anaconda_libraries_in_the_sandbox(
    shared_dir: Path, codabench_legacy_env: BuiltEnvironment
) -> None:
    source = make_evalai_challenge(shared_dir / "source", main_py=LIBRARIES_SCRIPT)
    challenge = shared_dir / "challenge"
    import_challenge(source, challenge, "codabench-legacy")
    settings = Settings(work_root=shared_dir / "runs")
    request = RunRequest(make_upload(shared_dir / "upload"), str(challenge), "dev", keep=True)
    report = run_entry(request, settings)
    assert report.run_dir is not None
    log = (report.run_dir / "scoring-dev-train-split.log").read_text()
    assert report.status is RunStatus.SCORED, log
    assert report.scores["dev-train-split"]["Accuracy"] == 0.5
    line = next(text for text in log.splitlines() if text.startswith("LIBRARIES "))
    imported = json.loads(line.removeprefix("LIBRARIES "))
    locked = {
        name.lower(): version for name, (version, _) in codabench_legacy_env.manifest.wheels.items()
    }
    assert imported == {module: locked[wheel] for module, wheel in MODULES.items()}
