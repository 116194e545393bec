"""Programs that deserialize participant files: named in the import's warnings.

``pickle.load`` (and joblib, dill, ``torch.load``, ``np.load(..., allow_pickle=True)``,
``pd.read_pickle``) of a participant's file runs the participant's code inside the scoring or
ingestion program, which holds the references and writes the score; so does importing a
module from the submission's folder in a scoring program. Codabench runs such code the same
way; the import warns, naming the file and the line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bundle_fixtures import SCORE_JSON, make_code_bundle, make_v2_bundle
from evalai_challenge import MAIN_PY, make_evalai_challenge

from proctor.services.local.bundle_import import import_challenge

LOADS = {
    "pickle": "import pickle\nmodel = pickle.load(open(sys.argv[1] + '/res/model.pkl', 'rb'))\n",
    "joblib": "import joblib\nmodel = joblib.load(sys.argv[1] + '/res/model.joblib')\n",
    "numpy": "import numpy as np\nx = np.load(sys.argv[1] + '/res/x.npy', allow_pickle=True)\n",
    "torch": "import torch\nstate = torch.load(sys.argv[1] + '/res/model.pt')\n",
    "pandas": "import pandas as pd\nframe = pd.read_pickle(sys.argv[1] + '/res/x.pkl')\n",
    "import from res": "sys.path.insert(0, sys.argv[1] + '/res')\nimport model\n",
    "spec from file": (
        "import importlib.util\n"
        "spec = importlib.util.spec_from_file_location('m', sys.argv[1] + '/res/m.py')\n"
    ),
}
HARMLESS = (
    "import numpy as np, json\nx = np.load(sys.argv[1] + '/res/x.npy')\n"
    "y = np.load(sys.argv[1] + '/res/y.npy', allow_pickle=False)\n"
    "z = json.load(open(sys.argv[1] + '/res/z.json'))\n"
)


def _with_prefix(code: str) -> str:
    """The toy scoring program, with ``code`` run (never reached: it is only read) first."""
    return SCORE_JSON.replace("from pathlib import Path\n", "from pathlib import Path\nif 0:\n"
                              + "".join(f"    {line}\n" for line in code.splitlines()))  # fmt: skip


@pytest.mark.parametrize("kind", sorted(LOADS))
def test_a_scoring_program_loading_participant_objects_is_named(tmp_path: Path, kind: str) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle", score_py=_with_prefix(LOADS[kind]))
    result = import_challenge(bundle, tmp_path / "dest")
    named = [w for w in result.warnings if "score.py" in w and "participant's code" in w]
    assert len(named) == 1, result.warnings
    assert "line " in named[0] and "references" in named[0]


def test_loading_plain_data_is_not_named(tmp_path: Path) -> None:
    bundle = make_v2_bundle(tmp_path / "bundle", score_py=_with_prefix(HARMLESS))
    result = import_challenge(bundle, tmp_path / "dest")
    assert not [w for w in result.warnings if "participant's code" in w], result.warnings


def test_an_evalai_script_unpickling_the_submission_is_named(tmp_path: Path) -> None:
    unused = "def _unused(path):\n    return pickle.loads(open(path, 'rb').read())\n\n\n"
    main_py = "import pickle\n" + MAIN_PY.replace("def evaluate(", unused + "def evaluate(", 1)
    source = make_evalai_challenge(tmp_path / "source", main_py=main_py)
    result = import_challenge(source, tmp_path / "dest", "host")
    named = [w for w in result.warnings if "main.py" in w and "participant's code" in w]
    assert len(named) == 1 and "pickle.loads" in named[0], result.warnings


def test_an_ingestion_program_importing_the_submission_is_not_named(tmp_path: Path) -> None:
    bundle = make_code_bundle(tmp_path / "bundle")
    assert "sys.path.insert(0, code)" in (bundle / "ingestion_program/ingestion.py").read_text()
    result = import_challenge(bundle, tmp_path / "dest")
    assert not [w for w in result.warnings if "participant's code" in w], result.warnings
    ingestion = bundle / "ingestion_program/ingestion.py"
    ingestion.write_text(ingestion.read_text() + "import pickle\npickle.load(open(code, 'rb'))\n")
    result = import_challenge(bundle, tmp_path / "again")
    named = [w for w in result.warnings if "participant's code" in w]
    assert len(named) == 1 and "ingestion.py" in named[0] and "pickle.load" in named[0], named
