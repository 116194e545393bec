"""The bundled physionet2018 challenge: generator, label rules, committed data and baseline."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.challenges.physionet2018 import BASELINE_DIR, CHALLENGE_DIR
from proctor.challenges.physionet2018.generate import (
    FS,
    SECONDS,
    TEST,
    TRAINING,
    Split,
    main,
    make_scenario,
    quiet_wfdb,
)
from proctor.challenges.physionet2018.labels import arousal_labels, parse_annotations, wake_ups
from proctor.challenges.physionet2018.signals import synthesize, to_digital
from proctor.errors import InputFileError
from proctor.formats.arousal_mat import read_arousal_reference

with quiet_wfdb():
    import wfdb

# wfdb 4.3 passes inplace= to pandas, which pandas 3.1 deprecates.
quiet_pandas = pytest.mark.filterwarnings("ignore:The inplace keyword:DeprecationWarning")

DATA = CHALLENGE_DIR / "data"
SYSTEM_PYTHON = Path("/usr/bin/python3")
LENGTH = 300  # samples of the hand-built records below, at FS_SMALL
FS_SMALL = 10.0  # Hz: 2 s = 20 samples, 10 s = 100 samples


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _expected(*windows: tuple[int, int, float]) -> np.ndarray:
    out = np.zeros(LENGTH)
    for first, last, value in windows:
        out[max(first, 0) : last + 1] = value
    return out


def _labels(marks: list[tuple[int, str]]) -> np.ndarray:
    samples = [s for s, _ in marks]
    notes = [n for _, n in marks]
    return arousal_labels(parse_annotations(samples, notes), length=LENGTH, fs=FS_SMALL)


def _load_classify() -> ModuleType:
    spec = importlib.util.spec_from_file_location("baseline_classify", BASELINE_DIR / "classify.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _records(folder: Path) -> list[str]:
    return (folder / "RECORDS").read_text().split()


# --- generator -------------------------------------------------------------------------------


def test_regenerating_the_data_gives_the_committed_bytes(tmp_path: Path) -> None:
    assert main([str(tmp_path)]) == 0
    assert _files(tmp_path) == _files(DATA)


def test_the_committed_data_stay_within_seven_megabytes() -> None:
    # 16 records × 13 channels × 60 s × 200 Hz × 2 bytes ≈ 5 MB: the 2018 montage, kept small
    total = sum(len(b) for b in _files(DATA).values())
    total += sum(len(b) for b in _files(BASELINE_DIR / "answers").values())
    assert total <= 7 * 2**20


def test_the_hidden_test_folder_holds_only_signals_and_headers() -> None:
    names = set(_files(DATA / "test"))
    records = _records(DATA / "test")
    assert names == {"RECORDS"} | {f"{r}{ext}" for r in records for ext in (".hea", ".mat")}


def test_training_and_reference_folders_hold_annotations_and_labels_for_every_record() -> None:
    for folder in (DATA / "training", DATA / "test-reference"):
        for record in _records(folder):
            assert (folder / f"{record}.arousal").is_file()
            assert (folder / f"{record}-arousal.mat").is_file()
    assert _records(DATA / "test") == _records(DATA / "test-reference")


@quiet_pandas
@pytest.mark.parametrize(("split", "index"), [(s, i) for s in (TRAINING, TEST) for i in (0, 5)])
def test_records_read_back_with_wfdb_equal_what_was_generated(split: Split, index: int) -> None:
    scenario, rng = make_scenario(split, index)
    digital = to_digital(synthesize(scenario, rng))
    name = split.names()[index]
    inputs = DATA / ("test" if split is TEST else "training")
    references = DATA / ("test-reference" if split is TEST else "training")
    record = wfdb.rdrecord(str(inputs / name), physical=False)
    assert record.fs == FS and record.sig_len == SECONDS * FS
    np.testing.assert_array_equal(record.d_signal, digital)
    annotation = wfdb.rdann(str(references / name), "arousal")
    samples, notes = scenario.annotations()
    assert list(annotation.sample) == samples and list(annotation.aux_note) == notes
    labels = arousal_labels(parse_annotations(samples, notes), length=scenario.length, fs=FS)
    np.testing.assert_array_equal(
        read_arousal_reference(references / f"{name}-arousal.mat"), labels
    )


def test_every_split_has_target_and_not_scored_samples() -> None:
    for folder in (DATA / "training", DATA / "test-reference"):
        labels = np.concatenate(
            [read_arousal_reference(folder / f"{r}-arousal.mat") for r in _records(folder)]
        )
        assert set(np.unique(labels)) == {-1.0, 0.0, 1.0}
        assert 0.1 < np.mean(labels[labels >= 0] > 0) < 0.6


# --- label rules -----------------------------------------------------------------------------


def test_a_rera_is_target_from_two_seconds_before_to_ten_seconds_after() -> None:
    labels = _labels([(0, "N2"), (100, "(arousal_rera"), (150, "arousal_rera)")])
    np.testing.assert_array_equal(labels, _expected((80, 250, 1.0)))


@pytest.mark.parametrize("kind", ["arousal_spontaneous", "arousal_plm", "arousal_bruxism"])
def test_other_arousals_are_target_from_two_seconds_before_to_two_seconds_after(kind: str) -> None:
    labels = _labels([(0, "N2"), (100, f"({kind}"), (150, f"{kind})")])
    np.testing.assert_array_equal(labels, _expected((80, 170, 1.0)))


@pytest.mark.parametrize(
    "kind", ["resp_obstructiveapnea", "resp_centralapnea", "resp_mixedapnea", "resp_hypopnea"]
)
def test_apneas_and_hypopneas_are_not_scored_ten_seconds_around(kind: str) -> None:
    labels = _labels([(0, "N2"), (150, f"({kind}"), (180, f"{kind})")])
    np.testing.assert_array_equal(labels, _expected((50, 280, -1.0)))


def test_other_respiratory_regions_are_neither_target_nor_excluded() -> None:
    labels = _labels([(100, "(resp_hypoventilation"), (150, "resp_hypoventilation)")])
    np.testing.assert_array_equal(labels, _expected())


def test_a_wake_up_is_not_scored_ten_seconds_around_it() -> None:
    labels = _labels([(0, "N1"), (100, "N2"), (150, "W"), (250, "W")])
    np.testing.assert_array_equal(labels, _expected((50, 250, -1.0)))


def test_a_record_that_starts_awake_has_no_wake_up() -> None:
    assert wake_ups([(0, "W"), (100, "N1"), (200, "R")]) == []
    assert wake_ups([(0, "W"), (100, "N1"), (200, "W"), (250, "W")]) == [200]


def test_not_scored_wins_over_target() -> None:
    labels = _labels(
        [
            (0, "N2"),
            (40, "(arousal_rera"),
            (60, "arousal_rera)"),
            (200, "(resp_hypopnea"),
            (230, "resp_hypopnea)"),
        ]
    )
    np.testing.assert_array_equal(labels, _expected((20, 160, 1.0), (100, 299, -1.0)))


def test_windows_are_clipped_at_the_record_edges() -> None:
    labels = _labels([(5, "(arousal_rera"), (290, "arousal_rera)")])
    np.testing.assert_array_equal(labels, _expected((0, 299, 1.0)))


@given(
    start=st.integers(0, LENGTH - 1),
    duration=st.integers(0, 100),
    apnea=st.integers(0, LENGTH - 1),
)
def test_every_sample_near_an_apnea_is_not_scored_whatever_the_arousals(
    start: int, duration: int, apnea: int
) -> None:
    marks = [(start, "(arousal_rera"), (start + duration, "arousal_rera)")]
    marks += [(apnea, "(resp_obstructiveapnea"), (apnea, "resp_obstructiveapnea)")]
    labels = _labels(sorted(marks))
    assert set(np.unique(labels)) <= {-1.0, 0.0, 1.0}
    assert np.all(labels[max(apnea - 100, 0) : apnea + 101] == -1.0)
    outside = np.ones(LENGTH, dtype=bool)
    outside[max(apnea - 100, 0) : apnea + 101] = False
    inside_target = np.zeros(LENGTH, dtype=bool)
    inside_target[max(start - 20, 0) : start + duration + 101] = True
    np.testing.assert_array_equal(labels[outside] == 1.0, inside_target[outside])


@pytest.mark.parametrize(
    ("marks", "message"),
    [
        ([(10, "arousal_rera)")], "closed but never opened"),
        ([(10, "(arousal_rera")], "never closed"),
        ([(10, "(arousal_rera"), (20, "(arousal_rera")], "opened again"),
        ([(10, "N5")], "not a stage"),
        ([(10, "(snoring"), (20, "snoring)")], "start with"),
        ([(20, "N1"), (10, "N2")], "non-decreasing"),
    ],
)
def test_malformed_annotations_are_refused_with_the_reason(
    marks: list[tuple[int, str]], message: str
) -> None:
    with pytest.raises(InputFileError, match=message):
        _labels(marks)


# --- baseline entry --------------------------------------------------------------------------


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    """A fresh copy of the baseline entry, as the sandbox's writable home would hold it."""
    home = tmp_path / "entry"
    shutil.copytree(BASELINE_DIR, home, ignore=shutil.ignore_patterns("__pycache__"))
    return home


def _run(argv: list[str], cwd: Path, data: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "PROCTOR_DATA": str(data), "LANG": "C.UTF-8"}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)


needs_system_python = pytest.mark.skipif(
    not SYSTEM_PYTHON.exists(), reason="the sandbox's interpreter /usr/bin/python3 is missing"
)


@needs_system_python
def test_setup_sh_succeeds_with_the_system_python(entry: Path) -> None:
    done = _run(["./setup.sh"], entry, DATA / "training")
    assert done.returncode == 0, done.stderr


@needs_system_python
def test_answers_equal_what_next_sh_writes_for_every_training_record(entry: Path) -> None:
    records = _records(DATA / "training")
    assert sorted(p.name for p in (entry / "answers").iterdir()) == sorted(
        f"{r}.vec" for r in records
    )
    for record in records:
        done = _run(["./next.sh", record], entry, DATA / "training")
        assert done.returncode == 0, done.stderr
        answer = entry / "answers" / f"{record}.vec"
        assert (entry / f"{record}.vec").read_bytes() == answer.read_bytes()


@needs_system_python
def test_next_sh_fails_clearly_on_a_missing_record(entry: Path) -> None:
    done = _run(["./next.sh", "no-such-record"], entry, DATA / "test")
    assert done.returncode != 0
    assert "no-such-record.hea" in done.stderr


def test_classify_writes_one_probability_per_sample(tmp_path: Path) -> None:
    record = _records(DATA / "test")[0]
    done = subprocess.run(
        [sys.executable, str(BASELINE_DIR / "classify.py"), record],
        cwd=tmp_path,
        env={**os.environ, "PROCTOR_DATA": str(DATA / "test")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / f"{record}.vec").read_text().splitlines()
    assert len(lines) == wfdb.rdheader(str(DATA / "test" / record)).sig_len
    assert all(re.fullmatch(r"[01]\.\d{3}", line) for line in lines)
    values = np.array([float(v) for v in lines])
    assert values.min() >= 0.0 and values.max() <= 1.0 and values.std() > 0.01


def test_train_py_reproduces_the_committed_model(tmp_path: Path) -> None:
    out = tmp_path / "model.json"
    done = subprocess.run(
        [sys.executable, str(BASELINE_DIR / "train.py"), str(DATA / "training"), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == (BASELINE_DIR / "model.json").read_bytes()


def test_the_baseline_beats_chance_on_the_hidden_test_records(tmp_path: Path) -> None:
    from proctor.metrics.physionet2018 import gross_scores

    classify = _load_classify()
    references, predictions = [], []
    for record in _records(DATA / "test"):
        vec = classify.classify(DATA / "test", record, tmp_path)
        predictions.append(np.loadtxt(vec, dtype=np.float32))
        references.append(read_arousal_reference(DATA / "test-reference" / f"{record}-arousal.mat"))
    labels = np.concatenate(references)
    positive_rate = float(np.mean(labels[labels >= 0] > 0))
    auprc, auroc = gross_scores(zip(predictions, references, strict=True))
    assert auprc > positive_rate + 0.25
    assert auroc > 0.7


def test_the_challenge_file_loads_with_its_folders_and_baseline() -> None:
    from proctor.resolve import load_challenge

    challenge = load_challenge(CHALLENGE_DIR)
    assert challenge.name == "physionet2018"
    assert [t.name for t in challenge.tasks] == ["arousal"]
    for name in ("setup.sh", "next.sh"):
        assert os.access(BASELINE_DIR / name, os.X_OK)


# --- the 2018 file layout --------------------------------------------------------------------


def test_signals_are_the_13_channels_of_2018_in_val_readable_by_scipy() -> None:
    import scipy.io

    record = _records(DATA / "training")[0]
    val = scipy.io.loadmat(str(DATA / "training" / f"{record}.mat"))["val"]
    assert val.shape == (13, SECONDS * FS) and val.dtype == np.int16
    header = (DATA / "training" / f"{record}.hea").read_text().splitlines()
    assert header[0] == f"{record} 13 {FS} {SECONDS * FS}"
    names = [line.split()[8] for line in header[1:]]
    assert names == [
        "F3-M2", "F4-M1", "C3-M2", "C4-M1", "O1-M2", "O2-M1", "E1-M2",
        "Chin1-Chin2", "ABD", "CHEST", "AIRFLOW", "SaO2", "ECG",
    ]  # fmt: skip
    assert all(line.split()[:2] == [f"{record}.mat", "16+24"] for line in header[1:])


def test_h5py_reads_the_labels_and_sleep_stages_as_n_by_1_columns() -> None:
    import h5py

    record = _records(DATA / "training")[0]
    with h5py.File(DATA / "training" / f"{record}-arousal.mat", "r") as handle:
        assert handle["data"]["arousals"].shape == (SECONDS * FS, 1)
        stages = {
            name: handle["data/sleep_stages"][name][()] for name in handle["data/sleep_stages"]
        }
    assert sorted(stages) == sorted(["wake", "nonrem1", "nonrem2", "nonrem3", "rem", "undefined"])
    stacked = np.hstack(list(stages.values()))
    assert stacked.shape == (SECONDS * FS, 6)
    np.testing.assert_array_equal(stacked.sum(axis=1), 1.0)  # one stage per sample
    assert stages["undefined"][0, 0] == 1.0  # the lead-in before the first stage mark


def test_the_record_length_is_a_generator_parameter(tmp_path: Path) -> None:
    import h5py

    assert main([str(tmp_path / "a"), "--seconds", "90", "--records", "1"]) == 0
    assert main([str(tmp_path / "b"), "--seconds", "90", "--records", "1"]) == 0
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    header = (tmp_path / "a" / "test" / "te01-0001.hea").read_text().split()
    assert header[:4] == ["te01-0001", "13", "200", str(90 * FS)]
    with h5py.File(tmp_path / "a" / "test-reference" / "te01-0001-arousal.mat", "r") as handle:
        assert handle["data"]["arousals"].shape == (90 * FS, 1)
    with pytest.raises(SystemExit):
        main([str(tmp_path / "c"), "--seconds", "10"])
