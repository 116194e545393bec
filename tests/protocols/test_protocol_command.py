"""The ``command`` protocol with real entries in the real sandbox (VISCERAL's conventions)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from command_challenge import (
    IDS,
    SECRET,
    TRAINING,
    hidden_cases,
    liver_mask,
    make_command_challenge,
    make_command_entry,
)

from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.services.local.reports import EvaluationReport
from proctor.settings import Settings
from proctor.types import RunStatus, Stage, StageStatus

pytestmark = pytest.mark.sandbox

GOOD = 'cp /entry/liver.nii.gz "$out/${case}_58_team-1_1.nii.gz"\n'


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


def evaluate(
    shared_dir: Path, settings: Settings, entry: Path, **options: float
) -> EvaluationReport:
    challenge = make_command_challenge(shared_dir / "challenge", **options)
    return run_entry(RunRequest(entry, str(challenge), jobs=2), settings)


def stage(report: EvaluationReport, name: Stage) -> tuple[StageStatus, str]:
    found = next(s for s in report.stages if s.stage is name)
    return found.status, found.message


def test_a_good_entry_is_scored_per_organ_and_an_unasked_organ_is_not_segmented(
    shared_dir: Path, settings: Settings
) -> None:
    entry = make_command_entry(shared_dir / "entry", GOOD, {"liver.nii.gz": liver_mask()})
    report = evaluate(shared_dir, settings, entry)
    assert report.status is RunStatus.SCORED, report.to_json()
    scores = report.scores["CTce"]
    assert 0.3 < scores["dice_liver"] < 1.0  # another patient's liver: overlaps, not equal
    assert np.isnan(scores["dice_spleen"])  # asked, no file: not segmented, no error
    assert scores["organs_segmented"] == 1
    board = report.dashboard["CTce"]["DICE"]
    assert board["liver"]["count"] == 2 and board["liver"]["empty"] == 0
    assert board["spleen"]["count"] == 0 and board["spleen"]["empty"] == 2
    assert board["liver"]["min"] <= board["liver"]["median"] <= board["liver"]["max"]
    shown = report.to_json()["dashboard"]["CTce"]["DICE"]["spleen"]
    assert shown == {"empty": 2, "count": 0, "min": None, "max": None, "median": None,
                     "mean": None}  # fmt: skip


def test_the_program_gets_the_argv_template_with_every_id_as_its_own_item(
    shared_dir: Path, settings: Settings
) -> None:
    body = (
        '[ "$1" = -i ] && [ "$3" = -o ] && [ "$out" = /output ] && [ "$5" = -r ] || exit 7\n'
        f'[ "$6 $7 $#" = "{IDS[0]} {IDS[1]} 7" ] || exit 8\n'
        f'[ "$case" = {TRAINING} ] || [ "$in" != /data/{TRAINING}.nii.gz ] || exit 9\n'
        '[ -z "$(ls -A "$out")" ] || exit 10\n' + GOOD
    )
    entry = make_command_entry(shared_dir / "entry", body, {"liver.nii.gz": liver_mask()})
    report = evaluate(shared_dir, settings, entry)
    assert report.status is RunStatus.SCORED, report.to_json()


BAD_OUTPUTS = {
    "wrongly named": (
        'cp /entry/liver.nii.gz "$out/${case}_liver.nii.gz"\n',
        r"_liver\.nii\.gz: not named 10000100_1_CTce_ThAb_RADLEXID_PARTICIPANT_1\.nii\.gz",
    ),
    "an id not asked for": (
        'cp /entry/liver.nii.gz "$out/${case}_1302_t_1.nii.gz"\n',
        r"ID 1302 was not asked for \(asked: 58 86\)",
    ),
    "wrongly shaped": (
        'cp /entry/small.nii.gz "$out/${case}_58_t_1.nii.gz"\n',
        r"_58_t_1\.nii\.gz: shape \(8, 8, 8\) differs from the input volume's \(56, 44, 32\)",
    ),
    "not NIfTI": (
        'echo "not an image" | gzip > "$out/${case}_58_t_1.nii.gz"\n',
        r"_58_t_1\.nii\.gz: not a readable NIfTI image",
    ),
    "values beyond [0, 1]": (
        'cp /entry/labels.nii.gz "$out/${case}_58_t_1.nii.gz"\n',
        r"values range from 0 to 58: write 0 \(background\) and 1 \(organ\)",
    ),
    "another header": (
        'cp /entry/moved.nii.gz "$out/${case}_58_t_1.nii.gz"\n',
        r"header differs from the input volume's \(affine",
    ),
    "a symbolic link": (
        'ln -s /entry/liver.nii.gz "$out/${case}_58_t_1.nii.gz"\n',
        r"not a regular file",
    ),
}


def _bad_files() -> dict[str, np.ndarray]:
    mask = liver_mask()
    return {
        "liver.nii.gz": mask,
        "small.nii.gz": np.zeros((8, 8, 8), np.uint8),
        "labels.nii.gz": (mask * 58).astype(np.uint8),
    }


@pytest.mark.parametrize("kind", sorted(BAD_OUTPUTS))
def test_a_bad_output_is_a_per_case_error_naming_the_file(
    shared_dir: Path, settings: Settings, kind: str
) -> None:
    body, expected = BAD_OUTPUTS[kind]
    entry = make_command_entry(shared_dir / "entry", body, _bad_files())
    if kind == "another header":
        from command_challenge import save

        moved = np.diag([6.0, 6.0, 5.0, 1.0])
        save(liver_mask(), entry / "moved.nii.gz", affine=moved)
    report = evaluate(shared_dir, settings, entry)
    status, message = stage(report, Stage.QUIZ)
    assert status is StageStatus.FAILED, report.to_json()
    assert message.startswith(f"volume {TRAINING}: "), message
    assert __import__("re").search(expected, message), message
    assert stage(report, Stage.EXAM)[0] is StageStatus.SKIPPED


def test_a_bad_output_in_one_exam_volume_fails_that_volume_only(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = make_command_challenge(shared_dir / "challenge")
    broken = hidden_cases(challenge)[0]
    body = (
        f'if [ "$case" = {broken} ]; then echo junk > "$out/${{case}}_58_t_1.nii.gz"; exit 0; fi\n'
    )
    entry = make_command_entry(shared_dir / "entry", body + GOOD, {"liver.nii.gz": liver_mask()})
    report = run_entry(RunRequest(entry, str(challenge)), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    exam = next(s for s in report.stages if s.stage is Stage.EXAM)
    assert (exam.cases.total, exam.cases.failed) == (2, 1)
    assert report.scores["CTce"]["records_zero_filled"] == 1
    assert report.dashboard["CTce"]["DICE"]["liver"]["empty"] == 1


def test_the_format_check_stops_an_entry_that_writes_nothing(
    shared_dir: Path, settings: Settings
) -> None:
    entry = make_command_entry(shared_dir / "entry", "exit 0\n")
    report = evaluate(shared_dir, settings, entry)
    status, message = stage(report, Stage.QUIZ)
    assert status is StageStatus.FAILED
    assert "nothing usable came out" in message
    assert report.stages[1].cases.total == 1  # one training volume only
    assert stage(report, Stage.EXAM) == (StageStatus.SKIPPED, "not reached")


def test_hidden_references_are_never_inside_the_sandbox(
    shared_dir: Path, settings: Settings
) -> None:
    challenge = make_command_challenge(shared_dir / "challenge")
    refs = challenge / "refs"
    body = (
        f"! cat {refs}/{SECRET}.txt 2>/dev/null || exit 5\n"
        f"! ls {refs} 2>/dev/null || exit 6\n"
        "found=$(find / -xdev \\( -path /proc -o -path /sys -o -path /usr \\) -prune -o "
        f"-name '{SECRET}*' -print 2>/dev/null | head -n 1)\n"
        '[ -z "$found" ] || exit 7\n'
        f"! grep -rqs --exclude=execute_standard {SECRET} /data /entry /output /tmp || exit 8\n"
        + GOOD
    )
    entry = make_command_entry(shared_dir / "entry", body, {"liver.nii.gz": liver_mask()})
    report = run_entry(RunRequest(entry, str(challenge)), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    exam = next(s for s in report.stages if s.stage is Stage.EXAM)
    assert exam.cases.failed == 0  # every probe, in the quiz and the exam, found nothing


def test_an_over_budget_volume_is_killed(shared_dir: Path, settings: Settings) -> None:
    entry = make_command_entry(shared_dir / "entry", "sleep 30\n")
    report = evaluate(shared_dir, settings, entry, case_s=1.5)
    status, message = stage(report, Stage.QUIZ)
    assert status is StageStatus.FAILED
    assert "execute_standard timed out after 1.5 seconds (the limit per volume)" in message
    quiz = next(s for s in report.stages if s.stage is Stage.QUIZ)
    assert quiz.cases.timed_out == 1
    assert quiz.wall_s < 20


def test_a_missing_program_is_refused_at_prep(shared_dir: Path, settings: Settings) -> None:
    entry = make_command_entry(shared_dir / "entry", GOOD)
    (entry / "execute_standard").rename(entry / "execute_standard.sh")
    report = evaluate(shared_dir, settings, entry)
    status, message = stage(report, Stage.PREP)
    assert status is StageStatus.FAILED
    assert "execute_standard" in message and "missing" in message, message


def test_a_program_without_its_executable_bit_is_made_executable_and_said(
    shared_dir: Path, settings: Settings
) -> None:
    entry = make_command_entry(shared_dir / "entry", GOOD, {"liver.nii.gz": liver_mask()})
    (entry / "execute_standard").chmod(0o644)
    report = evaluate(shared_dir, settings, entry)
    status, message = stage(report, Stage.PREP)
    assert status is StageStatus.PASSED
    assert message == "execute_standard check completed; made executable: execute_standard"


def test_every_volume_finds_the_output_folder_empty_and_writable_whatever_the_last_one_left(
    shared_dir: Path, settings: Settings
) -> None:
    """A thread's volumes reuse one output folder (one case server configuration): what a
    volume leaves there, unreadable folders, links and the folder's own rights included, is
    gone before the next one starts."""
    challenge = make_command_challenge(shared_dir / "challenge")
    first = hidden_cases(challenge)[0]
    body = (
        '[ -z "$(ls -A "$out")" ] && [ -w "$out" ] || exit 9\n'
        f'if [ "$case" = {first} ]; then\n'
        '  mkdir -p "$out/junk/deeper" && echo x > "$out/junk/deeper/f"\n'
        '  chmod 0 "$out/junk/deeper" "$out/junk" && ln -s /etc/passwd "$out/link"\n'
        '  chmod 0 "$out"; exit 0\n'
        "fi\n" + GOOD
    )
    entry = make_command_entry(shared_dir / "entry", body, {"liver.nii.gz": liver_mask()})
    report = run_entry(RunRequest(entry, str(challenge), jobs=1), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    exam = next(s for s in report.stages if s.stage is Stage.EXAM)
    assert (exam.cases.total, exam.cases.failed) == (2, 1), report.to_json()
    assert report.scores["CTce"]["records_zero_filled"] == 1
