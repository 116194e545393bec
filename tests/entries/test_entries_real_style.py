"""Faithful equivalents of two real entries written by others, run through ``proctor run``.

``tests/data/entries/physionet2018_sample_style`` (ours) has the file layout, imports and calls of
the PhysioNet/CinC 2018 organizers' Python sample entry: its training script is run on a kit
made by ``proctor kit physionet2018 --seconds 3600``, its answers are regenerated on the public
records as participants did, then the entry passes every stage. ``ehealthkd2019_baseline_style``
(ours) is run as the eHealth-KD 2019 organizers' ``run_baseline_*.sh`` run their baseline,
writing into their example upload's scenario folders (each holding a ``.gitignore``).
``bench/real_entries.py`` runs the originals.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import DATA

from proctor.challenges.physionet2018 import CHALLENGE_DIR
from proctor.services.local.catalog import FreshRecords, write_kit, write_kit_with
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import RunStatus, Stage, StageStatus

ENTRIES = DATA / "entries"
SCENARIOS = {"scenario1-main": "1", "scenario2-taskA": "2", "scenario3-taskB": "3"}


def regenerate_answers(entry: Path, records: Path) -> None:
    """Write ``answers/RECORD.vec`` by running the entry's classifier on each public record,
    its files linked into the entry's folder as ``next.sh`` finds them."""
    (entry / "answers").mkdir()
    for record in (records / "RECORDS").read_text().split():
        for suffix in (".hea", ".mat"):
            (entry / f"{record}{suffix}").symlink_to(records / f"{record}{suffix}")
        python = [sys.executable, "run_my_classifier.py", record]
        subprocess.run(python, cwd=entry, check=True, capture_output=True)
        for suffix in (".hea", ".mat"):
            (entry / f"{record}{suffix}").unlink()
        (entry / f"{record}.vec").rename(entry / "answers" / f"{record}.vec")


@pytest.mark.very_slow  # a minute or more of a slow machine's CI: `make test-slow`
@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.environment
def test_the_2018_sample_style_entry_trains_on_a_kit_and_passes_every_stage(
    shared_dir: Path,
) -> None:
    kit = shared_dir / "kit"
    write_kit_with("physionet2018", kit, FreshRecords(seconds=3600, records=2))
    entry = shared_dir / "entry"
    shutil.copytree(ENTRIES / "physionet2018_sample_style", entry)
    records = [str(kit / "data" / name) for name in (kit / "data" / "RECORDS").read_text().split()]
    trained = subprocess.run(
        [sys.executable, "train_classifier.py", *records],
        cwd=entry,
        capture_output=True,
        text=True,
        check=False,
    )
    assert trained.returncode == 0, trained.stderr
    assert len(list((entry / "models").glob("*_model.pkl"))) == 2, trained.stderr
    regenerate_answers(entry, CHALLENGE_DIR / "data" / "training")
    for path in [entry, *entry.rglob("*")]:
        os.chmod(path, path.stat().st_mode | (0o555 if path.is_dir() else 0o444))
    report = run_entry(RunRequest(entry, "physionet2018"), Settings(work_root=shared_dir / "runs"))
    assert report.status is RunStatus.SCORED, report.to_json()
    assert all(
        stage.status in (StageStatus.PASSED, StageStatus.SKIPPED) for stage in report.stages
    ), report.to_json()
    assert [stage.stage for stage in report.stages][:3] == [Stage.PREP, Stage.QUIZ, Stage.EXAM]
    assert 0.0 < report.scores["arousal"]["auprc"] <= 1.0, report.scores


def test_the_ehealthkd_baseline_style_run_fills_the_example_upload_and_is_scored(
    tmp_path: Path,
) -> None:
    kit = tmp_path / "kit"
    write_kit("ehealthkd2019", kit)
    work = tmp_path / "work"
    shutil.copytree(ENTRIES / "ehealthkd2019_baseline_style", work)
    upload = tmp_path / "upload"
    for phase in ("dev", "test"):
        shutil.copytree(work / "submit", upload / phase)  # their scenario folders, .gitignores
        for scenario, number in SCENARIOS.items():
            skip = {"1": [], "2": ["--skip-B"], "3": ["--skip-A"]}[number]
            source = kit / "data" / phase / scenario / f"input_scenario{number}.txt"
            target = upload / phase / scenario / f"output_scenario{number}.txt"
            training = kit / "training" / "input_training.txt"
            command = [sys.executable, "-m", "scripts.baseline", *skip, str(training)]
            command += [str(source), str(target)]
            done = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False)
            assert done.returncode == 0, done.stderr
    assert (upload / "test" / "scenario1-main" / ".gitignore").is_file()
    report = run_entry(RunRequest(upload, "ehealthkd2019"), Settings(work_root=tmp_path / "runs"))
    assert report.status is RunStatus.SCORED, report.to_json()
    for stage in report.stages:
        assert stage.status in (StageStatus.PASSED, StageStatus.SKIPPED), report.to_json()
    prep = next(stage for stage in report.stages if stage.stage is Stage.PREP)
    assert "dev/scenario1-main/.gitignore" in prep.message
    for scenario in SCENARIOS:
        assert report.scores[scenario]["f1"] > 0.3, report.scores
