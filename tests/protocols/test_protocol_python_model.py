"""The python_model protocol with real entries in the real sandbox (reference environment)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from autowsl_toy import BUDGET_S, GOOD_MODEL, make_challenge, make_entry

from proctor.pipeline.report import EvaluationReport
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import Failure, RunStatus, StageStatus

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


def evaluate(shared_dir: Path, settings: Settings, model: str, *, slow: str | None = None,
             keep: bool = False) -> EvaluationReport:  # fmt: skip
    challenge = make_challenge(shared_dir / "challenge", slow=slow)
    entry = make_entry(shared_dir / "entry", model)
    return run_entry(RunRequest(entry, str(challenge), keep=keep), settings)


def exam_cases(report: EvaluationReport) -> dict[str, dict[str, object]]:
    assert report.run_dir is not None
    lines = (report.run_dir / "cases.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    return {row["task"]: row for row in rows if row["stage"] == "exam" and row["record"]}


def test_a_working_model_is_scored_on_every_dataset_with_durations_in_efficiency(
    shared_dir: Path, settings: Settings
) -> None:
    report = evaluate(shared_dir, settings, GOOD_MODEL)
    assert report.status is RunStatus.SCORED, report.to_json()
    for task in ("a", "b"):
        assert 0.0 <= report.scores[task]["auc"] <= 1.0
        assert set(report.scores[task]) == {"auc", "datasets", "datasets_failed"}
        assert report.efficiency[task]["wall_s_per_case"] > 0


SLOW_MODEL = GOOD_MODEL.replace(
    "    def train(self, X, y):\n        pass",
    "    def train(self, X, y):\n        import time\n"
    "        if self.info.get('slow'):\n            time.sleep(60)",
)


def test_over_budget_training_is_killed_after_the_budget_and_only_that_dataset_fails(
    shared_dir: Path, settings: Settings
) -> None:
    report = evaluate(shared_dir, settings, SLOW_MODEL, slow="a", keep=True)
    assert report.status is RunStatus.FAILED
    assert report.failure is Failure.ENTRY
    assert report.tasks["a"].status is RunStatus.FAILED
    assert report.tasks["b"].status is RunStatus.SCORED
    assert "a" not in report.scores and 0.0 <= report.scores["b"]["auc"] <= 1.0
    case = exam_cases(report)["a"]
    assert case["timed_out"] is True
    assert "budget" in str(case["problem"])
    assert BUDGET_S <= float(str(case["wall_s"])) < BUDGET_S + 5


def test_code_run_at_import_time_is_on_the_clock(shared_dir: Path, settings: Settings) -> None:
    # load_s is 60 s: an unclocked import would be allowed to sleep 20 s and pass
    model = "import time\ntime.sleep(20)\n" + GOOD_MODEL
    report = evaluate(shared_dir, settings, model, keep=True)
    assert report.status is RunStatus.FAILED
    quiz = next(s for s in report.tasks["a"].stages if s.stage == "quiz")
    assert quiz.status is StageStatus.FAILED
    assert "ran out of its budget of 3 seconds" in quiz.message


def test_a_model_without_predict_is_refused_at_prep_naming_the_method(
    shared_dir: Path, settings: Settings
) -> None:
    model = GOOD_MODEL.split("    def predict")[0]
    report = evaluate(shared_dir, settings, model)
    assert report.status is RunStatus.FAILED
    prep = next(s for s in report.tasks["a"].stages if s.stage == "prep")
    assert prep.status is StageStatus.FAILED
    assert "class Model has no method predict" in prep.message


HUNTER = GOOD_MODEL.replace(
    "    def train(self, X, y):\n        pass",
    """    def train(self, X, y):
        import os
        found = []
        for root, dirs, files in os.walk("/"):
            if root.startswith(("/proc", "/sys", "/dev", "/usr")):
                dirs[:] = []
                continue
            found += [os.path.join(root, f) for f in files if f.endswith(".solution")]
        if found != ["/data/train.solution"]:
            raise RuntimeError(f"hidden labels reachable: {found}")""",
)


def test_hidden_test_labels_are_never_inside_the_sandbox(
    shared_dir: Path, settings: Settings
) -> None:
    report = evaluate(shared_dir, settings, HUNTER)
    assert report.status is RunStatus.SCORED, report.to_json()


def test_the_bundled_baseline_scores_the_same_twice_and_beats_a_constant(
    shared_dir: Path, settings: Settings
) -> None:
    from proctor.challenges.autowsl import BASELINE_DIR
    from proctor.services.local.demo import write_constant_model

    def practice(entry: Path) -> float:
        report = run_entry(RunRequest(entry, "autowsl", phase="practice"), settings)
        assert report.status is RunStatus.SCORED, report.to_json()
        return report.scores["practice"]["auc"]

    first, second = practice(BASELINE_DIR), practice(BASELINE_DIR)
    assert first == second
    assert first > 0.9 > practice(write_constant_model(shared_dir / "constant")) == 0.5
