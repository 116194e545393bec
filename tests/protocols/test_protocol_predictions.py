"""The predictions protocol on the bundled ehealthkd2019 challenge: no code runs, files are checked
and scored, and the hidden references reach the participant only as the disclosed scores."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from proctor.challenges import bundled_root
from proctor.pipeline.report import EvaluationReport
from proctor.pipeline.submission import Submission, evaluate_submission
from proctor.resolve import load_challenge
from proctor.sandbox.base import Outcome
from proctor.sandbox.fake import FakeRequest, FakeSandbox
from proctor.scoring import registry as scoring_registry
from proctor.scoring.base import TaskScores
from proctor.services.local.catalog import write_kit
from proctor.services.local.demo import demo_entries, demo_leaderboard, write_empty_predictions
from proctor.services.local.ehealthkd import score_participants
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.spec import Challenge
from proctor.spec.model import DisclosureSpec
from proctor.store.runfolder import RunFolder
from proctor.types import Failure, RunStatus, Stage, StageStatus

ROOT = bundled_root() / "ehealthkd2019"
TASKS = ("scenario1-main", "scenario2-taskA", "scenario3-taskB")
SCENARIO_KEYS = dict(zip(TASKS, ("scenario1", "scenario2", "scenario3"), strict=True))


def no_code(request: FakeRequest) -> Outcome:
    raise AssertionError(f"the predictions protocol ran {request.argv}")


@pytest.fixture
def challenge() -> Challenge:
    return load_challenge(ROOT)


@pytest.fixture
def baseline(tmp_path: Path) -> Path:
    entry = tmp_path / "baseline"
    shutil.copytree(ROOT / "baseline", entry)
    return entry


def evaluate(challenge: Challenge, entry: Path, runs: Path) -> EvaluationReport:
    folder = RunFolder.create(runs, "pred")
    sandbox = FakeSandbox(no_code)
    report = evaluate_submission(
        Submission(challenge, challenge.phase(None), entry, folder), sandbox
    )
    assert sandbox.requests == []
    return report


def stage(report: EvaluationReport, task: str, which: Stage) -> tuple[StageStatus, str]:
    found = next(s for s in report.stages if s.task == task and s.stage is which)
    return found.status, found.message


def test_the_baseline_scores_what_the_official_evaluation_gives(
    challenge: Challenge, baseline: Path, tmp_path: Path
) -> None:
    report = evaluate(challenge, baseline, tmp_path / "runs")
    assert report.status is RunStatus.SCORED, report.to_json()
    submissions = tmp_path / "submissions" / "team"
    submissions.mkdir(parents=True)
    shutil.copytree(baseline / "test", submissions / "run1")
    official = score_participants(submissions, ROOT / "data" / "test-reference", single=True)
    (entry,) = official.submissions["team"]
    for task in TASKS:
        record = entry[SCENARIO_KEYS[task]]
        assert isinstance(record, dict)
        expected = {key.lower(): value for key, value in record.items() if key != "submit"}
        assert report.scores[task] == expected
        assert 0.3 < report.scores[task]["f1"] < 1.0  # learns something, not everything


def test_the_baseline_program_is_deterministic_and_made_the_shipped_entry(
    tmp_path: Path,
) -> None:
    program = ROOT / "kit" / "baseline.py"
    made = []
    for attempt in ("one", "two"):
        out = tmp_path / attempt
        command = [sys.executable, str(program), str(ROOT / "kit" / "training"),
                   str(ROOT / "data"), str(out)]  # fmt: skip
        subprocess.run(command, check=True)
        made.append({p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()})
    shipped = ROOT / "baseline"
    assert made[0] == made[1]
    assert made[0] == {p.relative_to(shipped): p.read_bytes() for p in shipped.rglob("*.txt")}


def test_the_empty_entry_scores_zero_and_ranks_below_the_baseline(
    challenge: Challenge, tmp_path: Path
) -> None:
    entry = write_empty_predictions(challenge, tmp_path / "empty")
    report = evaluate(challenge, entry, tmp_path / "runs")
    assert report.status is RunStatus.SCORED, report.to_json()
    assert all(report.scores[task]["f1"] == 0.0 for task in TASKS)


def test_a_bad_line_is_named_by_file_and_line_at_the_quiz(
    challenge: Challenge, baseline: Path, tmp_path: Path
) -> None:
    bad = baseline / "dev" / "scenario1-main" / "output_a_scenario1.txt"
    lines = bad.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].replace("\t", " ", 1)
    bad.write_text("".join(lines), encoding="utf-8")
    report = evaluate(challenge, baseline, tmp_path / "runs")
    status, message = stage(report, "scenario1-main", Stage.QUIZ)
    assert status is StageStatus.FAILED
    assert message.startswith("dev/scenario1-main/output_a_scenario1.txt line 3: expected 4")
    assert str(tmp_path) not in message
    assert report.failure is Failure.ENTRY
    assert stage(report, "scenario2-taskA", Stage.QUIZ)[0] is StageStatus.PASSED


def test_a_bad_test_file_fails_the_score_stage_as_the_entrys_fault(
    challenge: Challenge, baseline: Path, tmp_path: Path
) -> None:
    (baseline / "test" / "scenario2-taskA" / "output_b_scenario2.txt").write_text(
        "causes\t1\t999\n", encoding="utf-8"
    )
    report = evaluate(challenge, baseline, tmp_path / "runs")
    status, message = stage(report, "scenario2-taskA", Stage.SCORE)
    assert status is StageStatus.FAILED
    assert message == (
        "test/scenario2-taskA/output_b_scenario2.txt line 1: keyphrase ID 999 is not "
        "defined in the output_a file"
    )
    assert report.failure is Failure.ENTRY
    assert "scenario2-taskA" not in report.scores


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda e: shutil.rmtree(e / "test" / "scenario3-taskB"),
            "test/scenario3-taskB/: missing: the upload needs one folder per case in test/",
        ),
        (
            lambda e: (e / "test" / "output_a_scenario1.txt").write_text("", encoding="utf-8"),
            "test/output_a_scenario1.txt: not a case of test/: its cases are scenario1-main",
        ),
        (
            lambda e: (e / "dev" / "scenario1-main" / "notes.md").write_text("x"),
            "dev/scenario1-main/notes.md: not a prediction file name (allowed: output_scenario?",
        ),
        (
            lambda e: (e / "submission.zip").write_bytes(b"PK"),
            "submission.zip: not part of a predictions upload: predictions go in test/CASE/",
        ),
        (
            lambda e: (e / "test" / "scenario1-main" / "output_b_scenario1.txt").write_bytes(
                "subject\t2\t1\ncausa\t1\t2 \xe9\n".encode("latin-1")
            ),
            "test/scenario1-main/output_b_scenario1.txt: line 2: not UTF-8 text (byte 22: "
            "invalid continuation byte)",
        ),
        (
            lambda e: (e / "test" / "scenario1-main" / "output_b_scenario1.txt").write_bytes(
                b"a" * (4 * 1024**2 + 1)
            ),
            "test/scenario1-main/output_b_scenario1.txt: 4194305 bytes, over the 4194304",
        ),
    ],
    ids=["missing-case", "stray-file", "unknown-name", "top-level", "latin-1", "oversize"],
)
def test_a_wrong_upload_is_refused_at_prep_with_the_fix(
    challenge: Challenge, baseline: Path, tmp_path: Path, change: object, expected: str
) -> None:
    assert callable(change)
    change(baseline)
    report = evaluate(challenge, baseline, tmp_path / "runs")
    status, message = stage(report, "scenario1-main", Stage.PREP)
    assert status is StageStatus.FAILED
    assert expected in message
    assert report.failure is Failure.ENTRY
    assert report.scores == {}


def test_dryrun_stops_after_the_quiz_which_shows_the_dev_scores(
    challenge: Challenge, baseline: Path, tmp_path: Path
) -> None:
    folder = RunFolder.create(tmp_path / "runs", "pred")
    submission = Submission(challenge, challenge.phase(None), baseline, folder, dry_run=True)
    report = evaluate_submission(submission, FakeSandbox(no_code))
    assert report.status is RunStatus.DRY_RUN
    status, message = stage(report, "scenario1-main", Stage.QUIZ)
    assert status is StageStatus.PASSED
    assert message.startswith("dev: f1 ")
    assert report.scores == {}


def reference_texts() -> list[str]:
    texts = []
    for path in (ROOT / "data" / "test-reference").rglob("output_*.txt"):
        texts += [line for line in path.read_text(encoding="utf-8").splitlines() if line]
    return texts


@pytest.mark.parametrize("score", ["none", "full"])
def test_the_report_after_score_shows_only_what_the_disclosure_allows(
    challenge: Challenge, baseline: Path, tmp_path: Path, score: str
) -> None:
    policy = DisclosureSpec(score=score, per_record="none")  # type: ignore[arg-type]
    strict = challenge.model_copy(update={"disclosure": policy})
    report = evaluate(strict, baseline, tmp_path / "runs")
    shown = json.dumps(report.to_json())
    for line in reference_texts():
        assert line not in shown
    assert report.per_record == {}
    if score == "none":
        assert report.scores == {}
    else:
        assert set(report.scores["scenario1-main"]) == set(
            challenge.task("scenario1-main").reported_metrics
        )


def test_the_kit_ships_both_splits_inputs_but_no_hidden_reference(tmp_path: Path) -> None:
    write_kit("ehealthkd2019", tmp_path / "kit")
    kit = tmp_path / "kit"
    hidden = {p.read_bytes() for p in (ROOT / "data" / "test-reference").rglob("output_b_*")}
    shipped = {p.read_bytes() for p in kit.rglob("*") if p.is_file()}
    assert not hidden & shipped
    assert (kit / "data" / "test" / "scenario3-taskB" / "output_a_scenario3.txt").is_file()
    assert (kit / "data" / "dev" / "scenario1-main" / "output_b_scenario1.txt").is_file()
    assert (kit / "baseline.py").is_file() and (kit / "training").is_dir()
    assert (kit / "README.md").read_text().startswith("# ehealthkd2019 starting kit")


def test_the_demo_ranks_the_baseline_above_the_empty_entry(
    challenge: Challenge, tmp_path: Path
) -> None:
    entries = demo_entries(challenge, tmp_path / "scratch")
    assert [label for label, _ in entries] == ["baseline", "empty"]
    reports = [(label, evaluate(challenge, entry, tmp_path / "runs")) for label, entry in entries]
    standings = demo_leaderboard(challenge, reports)
    assert [row.entry for row in standings] == ["baseline", "empty"]
    assert list(standings[0].scores) == list(TASKS)


def test_the_organizers_example_upload_with_gitignores_and_finder_litter_is_scored(
    baseline: Path, tmp_path: Path
) -> None:
    """Their example upload has a .gitignore in each scenario folder; macOS adds .DS_Store."""
    for case in (baseline / "dev").iterdir():
        (case / ".gitignore").write_text("*\n!.gitignore\n")
    (baseline / "test" / "scenario1-main" / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (baseline / "__MACOSX").mkdir()
    (baseline / "__MACOSX" / "._test").write_bytes(b"\x00\x05\x16\x07")
    (baseline / "test" / "scenario2-taskA" / "notes.txt").write_text("could change a score\n")
    settings = Settings(work_root=tmp_path / "work")
    refused = run_entry(RunRequest(baseline, "ehealthkd2019"), settings)
    status, message = stage(refused, "scenario1-main", Stage.PREP)
    assert status is StageStatus.FAILED  # a stray file among predictions is still refused
    assert "test/scenario2-taskA/notes.txt: not a prediction file name" in message
    assert ".gitignore" not in message.split("litter:")[0]
    (baseline / "test" / "scenario2-taskA" / "notes.txt").unlink()
    report = run_entry(RunRequest(baseline, "ehealthkd2019"), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    status, message = stage(report, "scenario1-main", Stage.PREP)
    assert status is StageStatus.PASSED
    assert "ignored operating-system/version-control litter: " in message
    for name in ("__MACOSX/", "dev/scenario1-main/.gitignore", "test/scenario1-main/.DS_Store"):
        assert name in message


def warning_count(message: str) -> int:
    found = re.search(r"\((\d+) warnings?\b", message)
    return int(found.group(1)) if found else 0


def scored_together(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real eHealth-KD scorer, with the three scenarios held so they score at the same time.

    Each waits until all three are scoring, scores (its reader warns), and waits again before
    returning: every scenario's capture is open while every other one warns.
    """
    real = scoring_registry.scorer_for("ehealthkd2019")
    started, finished = (threading.Barrier(len(TASKS), timeout=60) for _ in range(2))

    def score_task(*args: Any) -> TaskScores:
        started.wait()
        scored = real.score(*args)
        finished.wait()
        return scored

    together = dataclasses.replace(real, score=score_task)
    builtin = tuple(together if s is real else s for s in scoring_registry.BUILTIN_SCORERS)
    monkeypatch.setattr(scoring_registry, "BUILTIN_SCORERS", builtin)


def test_each_scenarios_quiz_warnings_land_on_that_scenario_every_time(
    challenge: Challenge, baseline: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scenarios are scored at once; four runs of one upload once gave (4,4,0), (0,0,4)..."""
    scored_together(monkeypatch)
    crossing = "target\t1\t3\n" * 4  # keyphrase 1 is in sentence 1, keyphrase 3 in sentence 2
    with (baseline / "dev" / "scenario1-main" / "output_b_scenario1.txt").open("a") as out:
        out.write(crossing)
    seen = []
    for attempt in range(10):
        report = evaluate(challenge, baseline, tmp_path / f"runs{attempt}")
        assert report.status is RunStatus.SCORED, report.to_json()
        seen.append([warning_count(stage(report, task, Stage.QUIZ)[1]) for task in TASKS])
    assert seen == [[4, 0, 0]] * len(seen)
