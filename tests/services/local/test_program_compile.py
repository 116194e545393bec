"""Programs that cannot run are found at import and check (issue 27), not by participants.

A CodaLab-style bundle whose scoring program and sample submission are Python 2, and a
scoring program with a ``TabError``: ``challenge import`` warns and ``challenge check`` names
each file and line, compiled with the Python of the environment that runs it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from bundle_fixtures import PREDICT_PY, SCORE_TXT, make_v1_program_zip

from proctor.environments.store import BuiltEnvironment
from proctor.services.local.authoring import check_challenge, new_challenge
from proctor.services.local.bundle_import import import_challenge
from proctor.settings import Settings

PY2_SCORE = SCORE_TXT + 'print "scored", len(truth)\n'
PY2_LINE = len(SCORE_TXT.splitlines()) + 1
PY2_PREDICT = PREDICT_PY.replace('print("PREDICT-PRINT: predicting", len(xs))', 'print "hi"')
PY2_PREDICT_LINE = 5
TABBED = "def score():\n\tx = 1\n        return x\n"


class Heard:
    """A check listener keeping what it hears."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.samples: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)

    def build_started(self, name: str) -> None:
        """Builds are not what these tests look at."""

    def build_step(self, name: str, step: str) -> None:
        """Builds are not what these tests look at."""

    def build_finished(self, name: str, seconds: float) -> None:
        """Builds are not what these tests look at."""

    def sample_started(self, name: str, index: int, total: int) -> None:
        self.samples.append(name)


def test_a_python_2_codalab_bundle_is_named_at_import_and_check(tmp_path: Path) -> None:
    bundle = make_v1_program_zip(tmp_path, score_py=PY2_SCORE, predict_py=PY2_PREDICT)
    dest = tmp_path / "challenge"
    result = import_challenge(bundle, dest, "host")
    (scoring,) = [w for w in result.warnings if "evaluate.py" in w and "does not compile" in w]
    assert f"evaluate.py:{PY2_LINE}:" in scoring and "Python 2" in scoring
    settings = Settings(work_root=tmp_path / "work")
    heard = Heard()
    problems = {p.location: p.message for p in check_challenge(dest, settings, listener=heard)}
    (score_at,) = [where for where in problems if where.endswith(f"evaluate.py:{PY2_LINE}")]
    assert "this is Python 2 code" in problems[score_at] and "scoring program" in problems[score_at]
    assert f"baseline/predict.py:{PY2_PREDICT_LINE}" in problems
    assert "sample baseline" in problems[f"baseline/predict.py:{PY2_PREDICT_LINE}"]
    assert any("Proctor's own Python" in note for note in heard.notes)


def test_a_check_without_settings_compiles_nothing(tmp_path: Path) -> None:
    bundle = make_v1_program_zip(tmp_path, score_py=PY2_SCORE)
    import_challenge(bundle, tmp_path / "challenge", "host")
    assert check_challenge(tmp_path / "challenge") == []


@pytest.mark.sandbox
@pytest.mark.environment
def test_a_tab_error_is_named_by_the_environments_python(
    shared_dir: Path, reference_env: BuiltEnvironment
) -> None:
    root = shared_dir / "challenge"
    new_challenge(root, "records")
    score = root / "scoring" / "score.py"
    score.write_text(TABBED)
    settings = dataclasses.replace(Settings.from_env(), work_root=shared_dir / "work")
    heard = Heard()
    problems = check_challenge(root, settings, listener=heard)
    assert [p.location for p in problems] == ["scoring/score.py:3"], problems
    assert problems[0].message.startswith("TabError: inconsistent use of tabs")
    assert any("'proctor-reference' compiled with its Python 3." in n for n in heard.notes)
    assert heard.samples == []  # run=False: no sample ran
