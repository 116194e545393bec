"""The bundled autowsl environment runs AutoWSL entries written as 2019 entries were.

``tests/data/entries/autowsl_2019_style`` (ours) imports LightGBM, hyperopt and psutil, calls
``lgb.train(early_stopping_rounds=...)`` and ``fmin(rstate=np.random.RandomState(1))`` and turns
categorical ids into features with ``int(x)``, as the organizers' sample and the prize-winning
entries do; ``bench/real_entries.py`` runs the real ones.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from paths import DATA

from proctor.challenges.autowsl import CHALLENGE_DIR
from proctor.environments.store import BuiltEnvironment
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import RunStatus, StageStatus

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.environment]
ENTRY = DATA / "entries" / "autowsl_2019_style"


def test_the_environment_holds_the_2019_libraries_at_their_2019_apis(
    autowsl_env: BuiltEnvironment,
) -> None:
    wheels = {name: version for name, (version, _) in autowsl_env.manifest.wheels.items()}
    assert {"lightgbm", "hyperopt", "psutil", "pandas", "scikit-learn", "numpy", "scipy"} <= set(
        wheels
    )
    assert wheels["lightgbm"] == "2.2.3"
    assert wheels["hyperopt"] == "0.2.5"


def test_the_generated_tables_have_the_original_column_types_and_integer_ids() -> None:
    folder = CHALLENGE_DIR / "data" / "public" / "practice"
    schema = json.loads((folder / "info.json").read_text())["schema"]
    assert set(schema.values()) == {"num", "cat", "time"}
    assert all(name.startswith(f"{kind[0]}_") for name, kind in schema.items())
    assert "t_1" in schema
    header, *rows = (line.split("\t") for line in (folder / "train.data").read_text().splitlines())
    for name in (n for n, kind in schema.items() if kind == "cat"):
        values = {row[header.index(name)] for row in rows} - {""}
        assert values and all(v.isdigit() for v in values), (name, sorted(values)[:5])


def test_a_2019_style_entry_passes_prep_quiz_exam_and_score(
    shared_dir: Path, autowsl_env: BuiltEnvironment
) -> None:
    entry = shared_dir / "entry"
    shutil.copytree(ENTRY, entry)
    settings = Settings(work_root=shared_dir / "runs")
    report = run_entry(RunRequest(entry, "autowsl", phase="feedback"), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert all(stage.status is StageStatus.PASSED for stage in report.stages), report.to_json()
    assert report.environment is not None and report.environment.name == "autowsl"
    aucs = {task: row["auc"] for task, row in report.scores.items()}
    assert set(aucs) == {"feedback-pu", "feedback-ssl", "feedback-noisy"}
    assert min(aucs.values()) > 0.75, aucs
