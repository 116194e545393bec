"""The pipeline's rules against a scripted fake sandbox: fast, and protocol-level only.

The same flows run end to end in the real sandbox in ``test_pipeline_e2e.py``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pipeline_fakes import ScriptedEntry, evaluate
from rich.console import Console
from toy_challenge import HIDDEN, PUBLIC, good_answer, make_challenge, make_entry

from proctor.cli.run_cmd import print_report
from proctor.errors import JobCancelledError
from proctor.pipeline.cancel import CancelToken
from proctor.sandbox.base import Outcome
from proctor.types import Failure, RunStatus, StageStatus

BROKEN = Outcome(exit_status=2, stderr="Traceback: secret-hidden-detail\n")


def with_yaml(challenge: Path, **changes: Any) -> Path:
    path = challenge / "challenge.yaml"
    data = yaml.safe_load(path.read_text())
    data.update(changes)
    path.write_text(yaml.safe_dump(data))
    return challenge


@pytest.fixture
def challenge(tmp_path: Path) -> Path:
    return make_challenge(tmp_path / "challenge")


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    return make_entry(tmp_path / "entry")


def stage(report: Any, name: str) -> dict[str, Any]:
    return next(s for s in report.to_json()["stages"] if s["name"] == name)


def test_a_good_entry_is_scored_with_every_stage_passed(challenge: Path, entry: Path) -> None:
    report = evaluate(challenge, entry, ScriptedEntry())
    assert report.status is RunStatus.SCORED
    assert report.failure is None
    assert [s.status for s in report.stages] == [StageStatus.PASSED] * 4
    assert report.scores["arousal"]["auprc"] == pytest.approx(1.0)
    assert report.to_json()["failure"] is None
    assert "tasks" not in report.to_json()


def test_exam_failures_disclose_counts_only(challenge: Path, entry: Path) -> None:
    scripted = ScriptedEntry(lambda r: BROKEN if r == "te02" else good_answer())
    report = evaluate(challenge, entry, scripted)
    exam = stage(report, "exam")
    assert exam["message"] == "exam: 3 cases, 2 passed, 1 failed (0 timed out)"
    assert "secret-hidden-detail" not in json.dumps(report.to_json())
    assert report.scores["arousal"]["records_zero_filled"] == 1


def test_the_quiz_shows_the_failed_cases_logs_at_full_disclosure(
    challenge: Path, entry: Path
) -> None:
    report = evaluate(challenge, entry, ScriptedEntry(lambda r: BROKEN))
    quiz = stage(report, "quiz")
    assert quiz["message"].startswith("record tr01: next.sh exited with status 2")
    assert "secret-hidden-detail" in quiz["message"]
    assert report.failure is Failure.ENTRY
    assert report.failed_stage == "quiz"


@pytest.mark.parametrize(
    ("level", "message", "passed"),
    [
        ("errors", "record tr01: next.sh exited with status 2", 0),
        ("counts", "quiz: 1 case, 0 passed, 1 failed (0 timed out)", 0),
        ("none", "quiz failed", 0),
    ],
)
def test_each_disclosure_level_of_a_failed_quiz(
    challenge: Path, entry: Path, level: str, message: str, passed: int
) -> None:
    with_yaml(challenge, disclosure={"quiz": level})
    report = evaluate(challenge, entry, ScriptedEntry(lambda r: BROKEN))
    quiz = stage(report, "quiz")
    assert quiz["message"] == message
    assert quiz["cases"]["total"] == 1
    if level == "none":
        assert quiz["cases"]["failed"] == 0


def test_the_quiz_starts_no_case_after_the_first_failure(challenge: Path, entry: Path) -> None:
    scripted = ScriptedEntry(lambda r: BROKEN)
    evaluate(challenge, entry, scripted, jobs=1)
    assert scripted.ran == [PUBLIC[0]]


def test_a_dry_run_stops_after_the_quiz(challenge: Path, entry: Path) -> None:
    scripted = ScriptedEntry()
    report = evaluate(challenge, entry, scripted, dry_run=True)
    assert report.status is RunStatus.DRY_RUN
    assert stage(report, "exam") == {**stage(report, "exam"), "status": "skipped"}
    assert stage(report, "exam")["message"] == "DRYRUN present"
    assert set(scripted.ran) == set(PUBLIC)


def test_an_invalid_value_is_named_during_the_quiz(challenge: Path, entry: Path) -> None:
    report = evaluate(challenge, entry, ScriptedEntry(lambda r: "2.0\n" * 40))
    message = stage(report, "quiz")["message"]
    assert "tr01.vec: line 1: the value 2. is outside [0, 1]" in message
    assert "/tmp" not in message and str(challenge.parent) not in message


def test_an_invalid_exam_output_is_counted_failed_and_scored_as_zeros(
    challenge: Path, entry: Path
) -> None:
    report = evaluate(
        challenge, entry, ScriptedEntry(lambda r: "nan\n" * 40 if r == "te01" else good_answer())
    )
    assert stage(report, "exam")["cases"]["failed"] == 1
    assert report.scores["arousal"]["records_zero_filled"] == 1


def test_the_rerun_reports_a_nondeterministic_entry_by_counts(tmp_path: Path, entry: Path) -> None:
    challenge = make_challenge(tmp_path / "det", determinism_cases=2)
    calls: dict[str, int] = {}

    def flaky(record: str) -> str:
        calls[record] = calls.get(record, 0) + 1
        return good_answer() if calls[record] == 1 or record != HIDDEN[0] else "0.5\n" * 40

    report = evaluate(challenge, entry, ScriptedEntry(flaky))
    rerun = stage(report, "rerun")
    assert rerun["message"] == "1 of 2 rerun cases gave identical output: NOT deterministic"
    assert report.to_json()["determinism"] == {"arousal": {"rerun": 2, "identical": 1}}


def test_a_failed_task_does_not_stop_the_others(tmp_path: Path, entry: Path) -> None:
    challenge = make_challenge(tmp_path / "two")
    data = yaml.safe_load((challenge / "challenge.yaml").read_text())
    second = {**data["tasks"][0], "name": "second"}
    with_yaml(challenge, tasks=[data["tasks"][0], second],
              phases=[{"name": "final", "tasks": ["arousal", "second"]}])  # fmt: skip
    scripted = ScriptedEntry()
    scripted.setup = Outcome(exit_status=0)
    original = scripted.__call__

    def handler(request: Any) -> Outcome:
        # Tasks run at once: the setup of task "arousal" fails, whichever starts first.
        if request.argv[0] == "./setup.sh" and "arousal" in request.host_path(request.cwd).parts:
            return Outcome(exit_status=1, stderr="no\n")
        return original(request)

    from proctor.pipeline.submission import Submission, evaluate_submission
    from proctor.resolve import load_challenge
    from proctor.sandbox.fake import FakeSandbox
    from proctor.store.runfolder import RunFolder

    loaded = load_challenge(challenge)
    folder = RunFolder.create(tmp_path / "runs", "two")
    report = evaluate_submission(
        Submission(loaded, loaded.phase(None), entry, folder), FakeSandbox(handler)
    )
    data = report.to_json()
    assert data["status"] == "failed"
    assert data["failure"] == "entry"
    assert data["failed_stage"] == "arousal:prep"
    assert data["tasks"] == {
        "arousal": {"status": "failed", "failure": "entry", "failed_stage": "prep"},
        "second": {"status": "scored", "failure": None, "failed_stage": None},
    }
    assert set(data["scores"]) == {"second"}
    names = [s["name"] for s in data["stages"]]
    assert names[:4] == ["arousal:prep", "arousal:quiz", "arousal:exam", "arousal:score"]
    assert names[4:] == ["second:prep", "second:quiz", "second:exam", "second:score"]


def test_a_scorer_fault_is_the_scorers_not_the_entrys(challenge: Path, entry: Path) -> None:
    (challenge / "refs" / "te02-arousal.mat").write_text("not a mat file")
    report = evaluate(challenge, entry, ScriptedEntry())
    assert report.failure is Failure.SCORER
    assert report.failed_stage == "score"
    assert "E-SCORE" in stage(report, "score")["message"]


def test_a_cancelled_job_raises_and_stops_running_cases(challenge: Path, entry: Path) -> None:
    token = CancelToken()

    def cancel_at_exam(record: str) -> str:
        if record.startswith("te"):
            token.cancel()
        return good_answer()

    with pytest.raises(JobCancelledError):
        evaluate(challenge, entry, ScriptedEntry(cancel_at_exam), cancel=token)


@pytest.mark.parametrize("value", ["1.0004", "-0.0004"])
def test_a_value_inside_the_official_range_is_scored_not_a_scorer_fault(
    challenge: Path, entry: Path, value: str
) -> None:
    """Hardening item 11: the calibration metrics crashed on values the docs call valid."""
    answer = (f"{value}\n" * 40) if value.startswith("-") else ("0.1\n" * 20 + f"{value}\n" * 20)
    (entry / "answers" / "tr01.vec").write_text(answer)
    (entry / "answers" / "tr02.vec").write_text(answer)
    report = evaluate(challenge, entry, ScriptedEntry(lambda r: answer))
    assert report.status is RunStatus.SCORED, report.to_json()
    assert report.failure is None


LEAKY_PEAK = 123_456_789  # a hidden byte encoded in the exam's peak memory
LEAKY_WALL = 7.654321


def leaky_entry() -> ScriptedEntry:
    def answer(record: str) -> str | Outcome:
        return good_answer()

    scripted = ScriptedEntry(answer)
    original = scripted.__call__

    class Leaky(ScriptedEntry):
        def __call__(self, request: Any) -> Outcome:
            outcome = original(request)
            if request.argv[-1].startswith("te"):
                return Outcome(exit_status=outcome.exit_status, wall_s=LEAKY_WALL,
                               cpu_s=LEAKY_WALL, peak_memory_bytes=LEAKY_PEAK)  # fmt: skip
            return outcome

    return Leaky(answer)


def test_no_number_from_the_exam_reaches_the_participant_at_counts(
    challenge: Path, entry: Path
) -> None:
    """Hardening item 4: an entry encoded a hidden byte exactly in its exam peak memory."""
    report = evaluate(challenge, entry, leaky_entry())
    data = report.to_json()
    text = json.dumps(data)
    assert str(LEAKY_PEAK) not in text and "7.65" not in text
    assert data["efficiency"] == {}
    assert stage(report, "exam")["wall_s"] is None  # hidden: null, never a misleading 0
    assert data["usage"] == {"wall_s": None, "cpu_s": None, "peak_memory_bytes": None}
    assert stage(report, "quiz")["wall_s"] is not None
    assert data["status"] == "scored"
    shown = io.StringIO()
    print_report(report, Console(file=shown, width=200))
    exam_row = next(line for line in shown.getvalue().splitlines() if "│ exam" in line)
    assert "hidden" in exam_row and "0.00" not in exam_row
    assert "usage: hidden" in shown.getvalue()


def test_the_organizer_keeps_the_exam_figures_in_the_run_folder(
    challenge: Path, entry: Path
) -> None:
    report = evaluate(challenge, entry, leaky_entry())
    runs = challenge.parent / "runs"
    kept = [json.loads(p.read_text()) for p in runs.rglob("efficiency.json")]
    assert kept and kept[0]["arousal"]["peak_memory_bytes"] == LEAKY_PEAK
    assert report.status is RunStatus.SCORED


def test_coarse_efficiency_shows_at_most_eight_levels(challenge: Path, entry: Path) -> None:
    with_yaml(challenge, disclosure={"efficiency": "coarse"})
    report = evaluate(challenge, entry, leaky_entry())
    shown = report.to_json()["efficiency"]["arousal"]
    assert shown["peak_memory_bytes"] != LEAKY_PEAK
    assert shown["peak_memory_bytes"] >= LEAKY_PEAK  # an upper level, never below the truth
    assert shown["wall_s_per_case"] >= LEAKY_WALL


def test_per_record_scores_are_withheld_unless_the_phase_shows_them(
    challenge: Path, entry: Path
) -> None:
    assert "per_record" not in evaluate(challenge, entry, ScriptedEntry()).to_json()
    phases = [{"name": "final", "tasks": ["arousal"], "disclosure": {"per_record": "rounded"}}]
    with_yaml(challenge, phases=phases)
    rows = evaluate(challenge, entry, ScriptedEntry()).to_json()["per_record"]["arousal"]
    assert all(round(v, 2) == v for row in rows.values() for v in row.values())


def test_usage_wall_time_is_the_stages_not_the_sum_of_parallel_cases(
    challenge: Path, entry: Path
) -> None:
    """Hardening item 18: usage.wall_s summed the wall time of parallel cases."""

    def slow_claim(record: str) -> str | Outcome:
        return good_answer()

    scripted = ScriptedEntry(slow_claim)
    original = scripted.__call__

    class Claims(ScriptedEntry):
        def __call__(self, request: Any) -> Outcome:
            outcome = original(request)
            return Outcome(exit_status=outcome.exit_status, wall_s=100.0)

    report = evaluate(challenge, entry, Claims(slow_claim), jobs=2)
    assert report.usage.wall_s < 10  # a fake run takes milliseconds, whatever it claims


def test_the_rerun_starts_from_the_home_as_it_was_after_setup(tmp_path: Path, entry: Path) -> None:
    """Hardening item 5: an entry cached its exam outputs in its home and replayed them."""
    import uuid

    challenge = make_challenge(tmp_path / "det", determinism_cases=2)

    class Replaying(ScriptedEntry):
        def __call__(self, request: Any) -> Outcome:
            record = request.argv[-1]
            if request.argv[0] == "./setup.sh" or record.startswith("tr"):
                return super().__call__(request)
            cache = request.host_path(f"/entry/cache-{record}")
            if not cache.exists():  # a fresh answer each time it has none cached
                cache.write_text(f"0.{uuid.uuid4().int % 1000:03d}\n" * 40)
            request.host_path(f"/entry/{record}.vec").write_text(cache.read_text())
            return Outcome(exit_status=0)

    report = evaluate(challenge, entry, Replaying())
    assert report.to_json()["determinism"]["arousal"]["identical"] < 2


def test_a_run_folder_cannot_be_listed_by_other_users(tmp_path: Path) -> None:
    """Hardening item 6: run folders holding hidden inputs were world-readable (0755)."""
    from proctor.store.runfolder import RunFolder

    folder = RunFolder.create(tmp_path / "runs", "toy")
    mode = folder.root.stat().st_mode & 0o777
    assert mode & 0o044 == 0, oct(mode)  # no listing by group or others
    assert mode & 0o011 == 0o011  # the sandbox slots may still traverse it to their mounts


def test_the_folder_of_run_folders_cannot_be_listed_either(tmp_path: Path) -> None:
    from proctor.store.runfolder import RunFolder

    RunFolder.create(tmp_path / "runs", "toy")
    assert (tmp_path / "runs").stat().st_mode & 0o777 == 0o711


def test_at_exam_none_neither_the_rerun_verdict_nor_the_zero_filled_count_shows(
    tmp_path: Path, entry: Path
) -> None:
    """Review: `identical` and `records_zero_filled` each carried hidden-data bits at `none`."""
    challenge = make_challenge(tmp_path / "det", determinism_cases=2)
    with_yaml(challenge, disclosure={"exam": "none"})
    scripted = ScriptedEntry(lambda r: BROKEN if r == "te03" else good_answer())
    data = evaluate(challenge, entry, scripted).to_json()
    assert "determinism" not in data
    assert "records_zero_filled" not in data["scores"]["arousal"]
    assert "zeros" not in stage_of(data, "score")["message"]


def stage_of(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in data["stages"] if s["name"] == name)


def test_a_rerun_with_no_exam_output_is_skipped_not_called_deterministic(
    tmp_path: Path, entry: Path
) -> None:
    challenge = make_challenge(tmp_path / "det", determinism_cases=2)
    data = evaluate(challenge, entry, ScriptedEntry(
        lambda r: good_answer() if r.startswith("tr") else BROKEN)).to_json()  # fmt: skip
    rerun = stage_of(data, "rerun")
    assert rerun["status"] == "skipped" and "no exam case gave an output" in rerun["message"]


def test_a_home_of_sparse_files_is_not_copied_for_the_rerun(tmp_path: Path, entry: Path) -> None:
    """Review: a home of holes would have been written out in full on the host's disk."""
    challenge = make_challenge(tmp_path / "det", determinism_cases=1)

    class Sparse(ScriptedEntry):
        def __call__(self, request: Any) -> Outcome:
            if request.argv[0] == "./setup.sh":
                with request.host_path("/entry/holes").open("wb") as handle:
                    handle.truncate(1 << 40)  # a terabyte of holes, no block used
                return Outcome(exit_status=0)
            return super().__call__(request)

    report = evaluate(challenge, entry, Sparse())
    rerun = stage_of(report.to_json(), "rerun")
    assert rerun["status"] == "skipped" and "larger than the home may hold" in rerun["message"]
    assert report.status is RunStatus.SCORED
