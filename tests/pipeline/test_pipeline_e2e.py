"""End-to-end evaluations of toy entries through the real bwrap sandbox."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from toy_challenge import (
    GOOD_NEXT,
    HIDDEN,
    SECRET,
    make_challenge,
    make_entry,
    make_exam_entry,
)

from proctor.pipeline.report import EvaluationReport, RunStatus, StageStatus
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


def evaluate(tmp_path: Path, settings: Settings, entry: Path, **limits: float) -> EvaluationReport:
    challenge = make_challenge(tmp_path / "challenge", **limits)
    return run_entry(RunRequest(entry, str(challenge), jobs=2), settings)


def stage(report: EvaluationReport, name: str) -> dict[str, object]:
    return next(s for s in report.to_json()["stages"] if s["name"] == name)


def test_a_good_entry_passes_every_stage_and_is_scored(tmp_path: Path, settings: Settings) -> None:
    report = evaluate(tmp_path, settings, make_entry(tmp_path / "entry"))
    assert report.status is RunStatus.SCORED, report.to_json()
    assert [s.status for s in report.stages] == [StageStatus.PASSED] * 4
    scores = report.scores["arousal"]
    assert scores["auprc"] == pytest.approx(1.0)
    assert scores["auroc"] == pytest.approx(1.0)
    assert stage(report, "exam")["cases"] == {"total": 3, "passed": 3, "failed": 0, "timed_out": 0}
    assert report.usage.cpu_s > 0  # prep and quiz: the exam's figures stay with the organizer
    assert report.efficiency == {}


def test_the_organizer_keeps_the_exam_efficiency_figures(
    tmp_path: Path, settings: Settings
) -> None:
    challenge = make_challenge(tmp_path / "challenge")
    report = run_entry(
        RunRequest(make_entry(tmp_path / "entry"), str(challenge), keep=True), settings
    )
    assert report.run_dir is not None
    figures = json.loads((report.run_dir / "efficiency.json").read_text())["arousal"]
    assert figures["peak_memory_bytes"] > 0 and figures["cpu_s_per_case"] > 0


def test_a_wrong_quiz_answer_stops_at_quiz_naming_record_and_line(
    tmp_path: Path, settings: Settings
) -> None:
    entry = make_entry(tmp_path / "entry")
    (entry / "answers" / "tr02.vec").write_text("0.100\n" * 40)
    report = evaluate(tmp_path, settings, entry)
    assert report.status is RunStatus.FAILED
    assert report.failed_stage == "quiz"
    assert "tr02" in stage(report, "quiz")["message"]
    assert "line 21" in stage(report, "quiz")["message"]
    assert stage(report, "exam")["status"] == "skipped"


def test_a_dryrun_file_stops_after_the_quiz(tmp_path: Path, settings: Settings) -> None:
    entry = make_entry(tmp_path / "entry", extra={"DRYRUN": ""})
    report = evaluate(tmp_path, settings, entry)
    assert report.status is RunStatus.DRY_RUN
    assert report.message == "dry run completed with no error"
    assert stage(report, "exam")["status"] == "skipped"
    assert report.scores == {}


def test_exam_failures_do_not_stop_it_and_disclose_only_counts(
    tmp_path: Path, settings: Settings
) -> None:
    entry = make_exam_entry(
        tmp_path / "entry",
        """\
  te02) echo "LEAKED-OUTPUT-$1"; echo "LEAKED-ERROR" >&2; exit 3 ;;
  te03) sleep 30 ;;
""",
    )
    report = evaluate(tmp_path, settings, entry, case_s=2)
    assert report.status is RunStatus.SCORED
    exam = stage(report, "exam")
    assert exam["status"] == "passed"
    assert exam["cases"] == {"total": 3, "passed": 1, "failed": 2, "timed_out": 1}
    text = json.dumps(report.to_json())
    assert "LEAKED" not in text
    assert "te02" not in text.split('"per_record"')[0]
    assert report.scores["arousal"]["records_zero_filled"] == 2


def test_the_entry_cannot_see_the_references_during_the_exam(
    tmp_path: Path, settings: Settings
) -> None:
    challenge_root = tmp_path / "challenge"
    head, tail = SECRET[:9], SECRET[9:]
    # the secret is split so that this script does not contain it verbatim
    next_sh = f"""#!/bin/sh
if grep -rqs "{head}""{tail}" /data /entry /tmp /etc /dev/shm \\
   || [ -n "$(find / -path /proc -prune -o -name '*-arousal.mat' -print 2>/dev/null)" ] \\
   || ls {challenge_root}/refs >/dev/null 2>&1; then
  exit 9
fi
exec ./good.sh "$1"
"""
    entry = make_entry(tmp_path / "entry", next_sh=next_sh, extra={"good.sh": GOOD_NEXT})
    (entry / "good.sh").chmod(0o755)
    report = evaluate(tmp_path, settings, entry, case_s=15)
    assert stage(report, "exam")["cases"]["passed"] == len(HIDDEN), report.to_json()


def test_a_setup_timeout_is_reported_in_the_prep_stage(tmp_path: Path, settings: Settings) -> None:
    entry = make_entry(tmp_path / "entry", setup_sh="#!/bin/sh\nsleep 30\n")
    report = evaluate(tmp_path, settings, entry, setup_s=1)
    assert report.failed_stage == "prep"
    assert "setup.sh: timed out after 1 second" in stage(report, "prep")["message"]


def test_a_failing_setup_shows_its_output(tmp_path: Path, settings: Settings) -> None:
    entry = make_entry(tmp_path / "entry", setup_sh="#!/bin/sh\necho cannot build >&2\nexit 4\n")
    report = evaluate(tmp_path, settings, entry)
    message = stage(report, "prep")["message"]
    assert "exited with status 4" in message
    assert "cannot build" in message


def test_an_entry_without_setup_sh_is_rejected_naming_it(
    tmp_path: Path, settings: Settings
) -> None:
    entry = make_entry(tmp_path / "entry")
    (entry / "setup.sh").unlink()
    report = evaluate(tmp_path, settings, entry)
    assert report.failed_stage == "prep"
    assert "setup.sh" in stage(report, "prep")["message"]


def test_a_non_executable_next_sh_is_made_executable_and_the_participant_told(
    tmp_path: Path, settings: Settings
) -> None:
    """Hardening item 15 changed this: refused before, now fixed and said (Windows zips)."""
    entry = make_entry(tmp_path / "entry")
    (entry / "next.sh").chmod(0o644)
    report = evaluate(tmp_path, settings, entry)
    assert report.status is RunStatus.SCORED
    assert "made executable: next.sh" in stage(report, "prep")["message"]
    assert not (entry / "next.sh").stat().st_mode & 0o111  # the participant's copy is untouched


def test_a_zipped_entry_is_evaluated_like_a_folder(tmp_path: Path, settings: Settings) -> None:
    folder = make_entry(tmp_path / "entry")
    archive = tmp_path / "my-entry.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo(f"entry/{path.relative_to(folder)}")
                info.external_attr = (path.stat().st_mode & 0o777) << 16
                zf.writestr(info, path.read_bytes())
    report = evaluate(tmp_path, settings, archive)
    assert report.status is RunStatus.SCORED, report.to_json()


def test_a_zip_slip_archive_is_rejected_at_prep(tmp_path: Path, settings: Settings) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("../../escaped.sh", "#!/bin/sh\n")
    report = evaluate(tmp_path, settings, archive)
    assert report.failed_stage == "prep"
    assert "escaped.sh" in stage(report, "prep")["message"]
    assert not (tmp_path / "escaped.sh").exists()
    assert [s["status"] for s in report.to_json()["stages"]] == ["failed"] + ["skipped"] * 3


def test_the_stage_clock_ends_an_exam_that_runs_too_long(
    tmp_path: Path, settings: Settings
) -> None:
    entry = make_exam_entry(
        tmp_path / "entry",
        """\
  te*) sleep 30 ;;
""",
    )
    report = evaluate(tmp_path, settings, entry, case_s=20, stage_s=8)
    assert report.failed_stage == "exam"
    assert "timed out" in stage(report, "exam")["message"]
    assert stage(report, "score")["status"] == "skipped"


def test_the_determinism_check_reports_identical_reruns(tmp_path: Path, settings: Settings) -> None:
    challenge = make_challenge(tmp_path / "challenge", determinism_cases=2)
    report = run_entry(RunRequest(make_entry(tmp_path / "entry"), str(challenge)), settings)
    assert report.status is RunStatus.SCORED
    assert report.to_json()["determinism"] == {"arousal": {"rerun": 2, "identical": 2}}
    assert "rerun" in [s.name for s in report.stages]


def test_the_determinism_check_catches_an_entry_that_answers_at_random(
    tmp_path: Path, settings: Settings
) -> None:
    entry = make_exam_entry(
        tmp_path / "entry",
        """\
  te*) od -An -N2 -tu2 /dev/urandom | awk '{printf "0.%03d\\n", $1 % 1000}' > "$1.vec" ;;
""",
    )
    challenge = make_challenge(tmp_path / "challenge", determinism_cases=3)
    report = run_entry(RunRequest(entry, str(challenge)), settings)
    verdict = report.to_json()["determinism"]["arousal"]
    assert verdict["rerun"] == 3
    assert verdict["identical"] < 3
    rerun = next(s for s in report.stages if s.name == "rerun")
    assert "NOT deterministic" in rerun.message
    assert "te0" not in rerun.message


def test_the_organizer_keeps_every_case_with_its_resources_and_logs(
    tmp_path: Path, settings: Settings
) -> None:
    entry = make_exam_entry(tmp_path / "entry", '  te02) echo "why te02 failed" >&2; exit 3 ;;')
    challenge = make_challenge(tmp_path / "challenge")
    report = run_entry(RunRequest(entry, str(challenge), keep=True), settings)
    assert report.run_dir is not None
    logged = [json.loads(x) for x in (report.run_dir / "cases.jsonl").read_text().splitlines()]
    lines = [line for line in logged if line["record"] is not None]
    by_case = {(line["stage"], line["record"]): line for line in lines}
    stages = {line["stage"]: line for line in logged if line["record"] is None}
    assert set(stages) == {"prep", "quiz", "exam", "score"}
    assert "setting up" in stages["prep"]["stdout_tail"]  # setup.sh's output, organizer only
    assert set(by_case) == {("quiz", r) for r in ("tr01", "tr02")} | {("exam", r) for r in HIDDEN}
    failed = by_case[("exam", "te02")]
    assert failed["ok"] is False
    assert failed["exit_status"] == 3
    assert "why te02 failed" in failed["stderr_tail"]
    assert all(line["wall_s"] > 0 and line["peak_memory_bytes"] > 0 for line in lines)
    assert "why te02 failed" not in json.dumps(report.to_json())


def test_a_scorer_crash_shows_an_error_code_never_the_references(
    tmp_path: Path, settings: Settings
) -> None:
    challenge = make_challenge(tmp_path / "challenge")
    # a corrupt reference whose bytes a traceback could quote
    (challenge / "refs" / "te02-arousal.mat").write_text(SECRET * 10)
    report = run_entry(
        RunRequest(make_entry(tmp_path / "entry"), str(challenge), keep=True), settings
    )
    assert report.failed_stage == "score"
    text = json.dumps(report.to_json())
    assert SECRET not in text
    assert "E-SCORE" in stage(report, "score")["message"]
    assert report.run_dir is not None
    assert (report.run_dir / "score-error.txt").read_text()
