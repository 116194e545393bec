"""The bundled physionet2026 challenge: committed data, EDF files, baseline and kit replica."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from kit_audit import audit

from proctor.challenges.physionet2026 import CHALLENGE_DIR
from proctor.challenges.physionet2026.edf import EdfSignal, write_edf
from proctor.challenges.physionet2026.generate import main
from proctor.environments.store import BuiltEnvironment
from proctor.resolve import load_challenge
from proctor.services.local.catalog import write_kit
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import RunStatus, StageStatus

DATA = CHALLENGE_DIR / "data"


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _helper_code() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "helper_code", CHALLENGE_DIR / "scripts" / "helper_code.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_regenerating_the_data_writes_the_committed_bytes(tmp_path: Path) -> None:
    assert main([str(tmp_path)]) == 0
    prevalence = (tmp_path / "prevalence.csv").read_bytes()
    (tmp_path / "prevalence.csv").unlink()
    assert _files(tmp_path) == _files(DATA)
    assert prevalence == (CHALLENGE_DIR / "scoring" / "prevalence.csv").read_bytes()
    assert sum(len(b) for b in _files(DATA).values()) < 4 * 1024**2


def test_the_hidden_split_has_no_labels_and_the_references_have_them() -> None:
    with (DATA / "hidden" / "test" / "demographics.csv").open() as handle:
        header = next(csv.reader(handle))
    assert "Cognitive_Impairment" not in header and "Age" in header
    assert not (DATA / "hidden" / "test" / "human_annotations").exists()
    with (DATA / "reference" / "test.csv").open() as handle:
        labels = [row["Cognitive_Impairment"] for row in csv.DictReader(handle)]
    assert len(labels) == 16 and {"True", "False"} == set(labels)


def test_the_challenge_s_edf_reader_reads_back_what_the_writer_wrote(tmp_path: Path) -> None:
    ramp = np.linspace(-120.0, 80.0, 4 * 3)
    steps = np.array([0.0, 1.0, 5.0])
    path = tmp_path / "x.edf"
    write_edf(path, [EdfSignal("C3", "uV", 4, ramp), EdfSignal("SpO2", "%", 1, steps)], seconds=3)
    signals, rates = _helper_code().load_signal_data(str(path))
    assert rates == {"c3": 4.0, "spo2": 1.0}
    assert np.allclose(signals["c3"], ramp, atol=0.01)
    assert np.allclose(signals["spo2"], steps, atol=0.001)


def test_a_session_file_holds_the_2026_channels() -> None:
    helper = _helper_code()
    table = DATA / "public" / "training" / "demographics.csv"
    record = helper.find_patients(str(table))[0]
    stem = f"{record['BidsFolder']}_ses-{record['SessionID']}"
    folder = DATA / "public" / "training" / "physiological_data" / record["SiteID"]
    signals, rates = helper.load_signal_data(str(folder / f"{stem}.edf"))
    assert {"f3", "c4", "m1", "e1", "chin", "ecg", "airflow", "spo2"} <= set(signals)
    assert rates["f3"] == 16.0 and len(signals["f3"]) == 16 * 60


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.environment
def test_the_kit_replica_trains_runs_and_scores_on_its_stand_in(
    shared_dir: Path, physionet2026_env: BuiltEnvironment
) -> None:
    kit = shared_dir / "kit"
    write_kit("physionet2026", kit)
    replica = load_challenge(kit / "challenge")
    assert all(task.hidden_inputs is not None for task in replica.tasks)  # the stand-in
    assert (kit / "challenge" / "scripts" / "run_model.py").is_file()
    assert (kit / "entry" / "Dockerfile").is_file()
    report = run_entry(
        RunRequest(kit / "entry", str(kit / "challenge")), Settings(work_root=shared_dir / "runs")
    )
    assert report.status is RunStatus.SCORED, report.to_json()
    assert all(s.status is StageStatus.PASSED for s in report.stages), report.to_json()
    assert report.scores["test"]["sessions"] == 8
    assert report.environment is not None and report.environment.name == "entry-image"
    assert report.environment.base == "python:3.10.1-buster → proctor/physionet2026"  # as bundled
    assert audit([shared_dir]) == []


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.environment
def test_the_environment_pins_the_example_s_requirements_at_their_versions(
    physionet2026_env: BuiltEnvironment,
) -> None:
    wheels = {name: version for name, (version, _) in physionet2026_env.manifest.wheels.items()}
    asked = (CHALLENGE_DIR.parent / "environment-physionet2026" / "requirements.in").read_text()
    pins = dict(
        line.split("==") for line in asked.splitlines() if line and not line.startswith("#")
    )
    assert set(pins) == {"edfio", "joblib", "numpy", "pandas", "scikit-learn", "scipy", "tqdm"}
    assert {name: wheels.get(name) for name in pins} == pins
    baseline = (CHALLENGE_DIR / "baseline" / "requirements.txt").read_text().split()
    assert all(pins[line.split("==")[0]] == line.split("==")[1] for line in baseline)
