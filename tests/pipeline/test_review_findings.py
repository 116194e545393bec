"""Regression tests for the findings of a review of the pipeline, protocols, spec and services.

Each test shows one bug that the review found; it failed before the fix it names.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from toy_challenge import make_challenge, make_entry, make_exam_entry

from proctor.errors import ConfigError
from proctor.pipeline.cases import run_cases
from proctor.pipeline.report import EvaluationReport, RunStatus
from proctor.protocols.base import CaseRun
from proctor.protocols.outputs import remove_output
from proctor.resolve import load_challenge
from proctor.sandbox.base import Outcome
from proctor.services.local import catalog
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings


def edit_challenge(root: Path, change: dict[str, Any]) -> Path:
    """Rewrite the toy challenge's yaml with top-level keys (or ``protocol.*``) changed."""
    path = root / "challenge.yaml"
    spec = yaml.safe_load(path.read_text())
    for key, value in change.items():
        if key.startswith("protocol."):
            spec["protocol"][key.removeprefix("protocol.")] = value
        elif key.startswith("task."):
            task = spec["tasks"][0]
            if value is None:
                task.pop(key.removeprefix("task."))
            else:
                task[key.removeprefix("task.")] = value
        else:
            spec[key] = value
    path.write_text(yaml.safe_dump(spec))
    return root


# --- stage runner: a crash must not let the whole stage run on --------------------------------


def test_an_exception_in_one_case_stops_the_stage_instead_of_running_every_other_case() -> None:
    calls: list[str] = []
    lock = threading.Lock()

    def run_case(record: str, wall_s: float) -> CaseRun:
        with lock:
            calls.append(record)
        raise RuntimeError("the sandbox broke")

    with pytest.raises(RuntimeError, match="the sandbox broke"):
        run_cases(
            [f"r{i}" for i in range(6)],
            run_case,
            jobs=1,
            case_s=5,
            stage_s=60,
            stop_on_failure=False,
        )
    assert calls == ["r0"]


def test_an_interrupt_while_waiting_stops_new_cases_from_starting() -> None:
    started: list[str] = []
    lock = threading.Lock()

    def run_case(record: str, wall_s: float) -> CaseRun:
        with lock:
            started.append(record)
        return CaseRun(record, Outcome(exit_status=0), Path("x"))

    def on_case(run: CaseRun) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_cases(
            ["a", "b", "c", "d"],
            run_case,
            jobs=1,
            case_s=5,
            stage_s=60,
            stop_on_failure=False,
            on_case=on_case,
        )
    assert started == ["a"]


# --- spec loader: hidden data and templates ----------------------------------------------------


@pytest.mark.parametrize("references", ["hidden", "hidden/labels"])
def test_references_inside_the_hidden_inputs_are_refused_since_the_exam_mounts_them(
    tmp_path: Path, references: str
) -> None:
    root = make_challenge(tmp_path / "c")
    (root / "hidden" / "labels").mkdir()
    edit_challenge(root, {"task.hidden_references": references})
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.hidden_references") as caught:
        load_challenge(root)
    assert "challenge.yaml" in str(caught.value)


def test_hidden_inputs_without_references_are_refused_at_load_not_after_the_exam(
    tmp_path: Path,
) -> None:
    root = edit_challenge(make_challenge(tmp_path / "c"), {"task.hidden_references": None})
    with pytest.raises(ConfigError, match=r"challenge\.yaml: tasks\[0\]\.hidden_references"):
        load_challenge(root)


@pytest.mark.parametrize(
    ("key", "template"),
    [
        ("answers", "answers.txt"),  # a shared answers file needs a shared output
        ("output", "{rec}.vec"),
        ("output", "{record}{0}.vec"),
        ("output", "/tmp/{record}.vec"),
        ("answers", "answers/{name}.vec"),
    ],
)
def test_a_record_template_that_cannot_name_one_file_per_record_is_refused_at_load(
    tmp_path: Path, key: str, template: str
) -> None:
    root = edit_challenge(make_challenge(tmp_path / "c"), {f"protocol.{key}": template})
    with pytest.raises(ConfigError, match=rf"challenge\.yaml: protocol\.{key}"):
        load_challenge(root)


@pytest.mark.parametrize(
    ("change", "location"),
    [
        (
            {
                "tasks": [
                    {"name": "a", "public_inputs": "public", "scorer": "physionet2018"},
                    {"name": "a", "public_inputs": "public", "scorer": "physionet2018"},
                ],
                "phases": [{"name": "final", "tasks": ["a"]}],
            },
            r"tasks\[1\]\.name",
        ),
        (
            {"phases": [{"name": "final", "tasks": ["arousal", "other"]}]},
            r"phases\[0\]\.tasks\[1\]",
        ),
        (
            {"phases": [{"name": "p", "tasks": ["arousal"]}, {"name": "p", "tasks": ["arousal"]}]},
            r"phases\[1\]\.name",
        ),
    ],
)
def test_name_clashes_in_the_challenge_name_their_yaml_path(
    tmp_path: Path, change: dict[str, Any], location: str
) -> None:
    root = edit_challenge(make_challenge(tmp_path / "c"), change)
    with pytest.raises(ConfigError, match=rf"challenge\.yaml: {location}: "):
        load_challenge(root)


# --- output collection: never follow a planted link on the host --------------------------------


def test_removing_an_output_never_follows_a_folder_link_planted_by_the_entry(
    tmp_path: Path,
) -> None:
    home, outside = tmp_path / "home", tmp_path / "outside"
    home.mkdir()
    outside.mkdir()
    (outside / "te01.vec").write_text("precious host file\n")
    (home / "out").symlink_to(outside)
    remove_output(home, "out/te01.vec")
    assert (outside / "te01.vec").read_text() == "precious host file\n"


def test_removing_an_output_still_removes_a_file_in_a_real_subfolder(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "te01.vec").write_text("x")
    (tmp_path / "te02.vec").symlink_to(tmp_path / "out" / "te01.vec")
    remove_output(tmp_path, "out/te01.vec")
    remove_output(tmp_path, "te02.vec")
    assert not (tmp_path / "out" / "te01.vec").exists()
    assert not (tmp_path / "te02.vec").is_symlink()


# --- whole evaluations in the real sandbox -----------------------------------------------------


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


def evaluate(challenge: Path, entry: Path, settings: Settings) -> EvaluationReport:
    return run_entry(RunRequest(entry, str(challenge), jobs=2), settings)


def stage(report: EvaluationReport, name: str) -> dict[str, Any]:
    return next(s for s in report.to_json()["stages"] if s["name"] == name)


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_challenge_without_shipped_answers_runs_the_quiz_without_comparing(
    tmp_path: Path, settings: Settings
) -> None:
    challenge = edit_challenge(make_challenge(tmp_path / "c"), {"protocol.answers": None})
    report = evaluate(challenge, make_entry(tmp_path / "entry", answers=False), settings)
    assert report.status is RunStatus.SCORED, report.to_json()


@pytest.mark.sandbox
@pytest.mark.slow
def test_an_entry_larger_than_its_home_fails_prep_instead_of_crashing(
    tmp_path: Path, settings: Settings
) -> None:
    challenge = make_challenge(tmp_path / "c")
    edit_challenge(challenge, {"limits": {"home_bytes": 2**20, "output_bytes": 2**16}})
    entry = make_entry(tmp_path / "entry")
    (entry / "model.bin").write_bytes(b"\0" * (3 * 2**20))
    report = evaluate(challenge, entry, settings)
    assert report.failed_stage == "prep", report.to_json()
    assert "home" in stage(report, "prep")["message"]
    assert not list((settings.work_root).glob("toy-*")), "the run folder was left behind"


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("level", ["counts", "none"])
def test_quiz_disclosure_below_errors_shows_no_output_values(
    tmp_path: Path, settings: Settings, level: str
) -> None:
    challenge = edit_challenge(make_challenge(tmp_path / "c"), {"disclosure": {"quiz": level}})
    entry = make_entry(tmp_path / "entry")
    (entry / "answers" / "tr02.vec").write_text("0.100\n" * 40)
    report = evaluate(challenge, entry, settings)
    quiz = stage(report, "quiz")
    assert quiz["status"] == "failed"
    assert "0.9" not in quiz["message"]
    assert "line" not in quiz["message"]
    if level == "none":
        assert quiz["cases"]["failed"] == 0
        assert "tr02" not in quiz["message"]


# --- catalog: `proctor challenges` checks scorers as the docs say -------------------------------


def test_listing_the_bundled_challenges_checks_their_scorers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_challenge(tmp_path / "toy")
    edit_challenge(tmp_path / "toy", {"task.scorer": "no-such-scorer"})
    monkeypatch.setattr(catalog, "bundled_root", lambda: tmp_path)
    monkeypatch.setattr(catalog, "bundled_names", lambda: ["toy"])
    with pytest.raises(ConfigError, match=r"challenge\.yaml: tasks\[0\]\.scorer"):
        catalog.list_challenges()


@pytest.mark.sandbox
@pytest.mark.slow
def test_score_disclosure_none_shows_only_that_the_entry_was_scored(
    tmp_path: Path, settings: Settings
) -> None:
    challenge = edit_challenge(make_challenge(tmp_path / "c"), {"disclosure": {"score": "none"}})
    report = evaluate(challenge, make_entry(tmp_path / "entry"), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.to_json()["scores"] == {}
    assert "per_record" not in report.to_json()


@pytest.mark.sandbox
@pytest.mark.slow
def test_parallel_cases_each_within_the_process_limit_do_not_fail_each_other(
    tmp_path: Path, settings: Settings
) -> None:
    entry = make_exam_entry(
        tmp_path / "entry",
        """  te01) for i in $(seq 50); do sleep 4 & done; wait; exec ./good.sh "$1" ;;
  te02|te03) sleep 1; for i in $(seq 30); do sleep 1 & done; wait; exec ./good.sh "$1" ;;""",
    )
    challenge = make_challenge(tmp_path / "c")
    report = run_entry(RunRequest(entry, str(challenge), jobs=3), settings)
    assert stage(report, "exam")["cases"]["failed"] == 0, report.to_json()
