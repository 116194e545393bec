"""The bundled physionet2017 challenge: generator, committed data, baseline and trivial entry."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import scipy.io

from proctor.challenges.physionet2017 import BASELINE_DIR, CHALLENGE_DIR, TRIVIAL_DIR
from proctor.challenges.physionet2017.generate import (
    SHARES,
    TEST,
    TRAINING,
    Split,
    main,
    record_signal,
    split_labels,
)
from proctor.challenges.physionet2018.generate import quiet_wfdb
from proctor.metrics.physionet_scores import parse_answer_lines, score_2017
from proctor.resolve import load_challenge
from proctor.spec.environment import EnvironmentSpec

with quiet_wfdb():
    import wfdb

DATA = CHALLENGE_DIR / "data"
quiet_pandas = pytest.mark.filterwarnings("ignore:The inplace keyword:DeprecationWarning")


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _records(folder: Path) -> list[str]:
    return (folder / "RECORDS").read_text().split()


def _reference(folder: Path) -> dict[str, str]:
    return parse_answer_lines((folder / "REFERENCE.csv").read_text(), source="REFERENCE.csv")


def _load_classify() -> ModuleType:
    spec = importlib.util.spec_from_file_location("baseline2017", BASELINE_DIR / "classify.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_regenerating_the_data_gives_the_committed_bytes(tmp_path: Path) -> None:
    assert main([str(tmp_path)]) == 0
    assert _files(tmp_path) == _files(DATA)


def test_the_committed_data_stay_small() -> None:
    assert sum(len(b) for b in _files(DATA).values()) <= 2 * 2**20


def test_the_hidden_inputs_hold_no_labels_and_the_references_every_record() -> None:
    records = _records(DATA / "test")
    assert set(_files(DATA / "test")) == {"RECORDS"} | {
        f"{r}{ext}" for r in records for ext in (".hea", ".mat")
    }
    assert sorted(_reference(DATA / "test-reference")) == sorted(records)
    assert sorted(_reference(DATA / "training")) == sorted(_records(DATA / "training"))


def test_every_split_holds_each_class_in_its_share() -> None:
    for folder in (DATA / "training", DATA / "test-reference"):
        labels = list(_reference(folder).values())
        for label, share in SHARES.items():
            assert abs(labels.count(label) / len(labels) - share) < 0.03


@quiet_pandas
@pytest.mark.parametrize(("split", "index"), [(TRAINING, 0), (TRAINING, 7), (TEST, 3)])
def test_records_read_back_with_scipy_and_wfdb_equal_what_was_generated(
    split: Split, index: int
) -> None:
    folder = DATA / ("test" if split is TEST else "training")
    name = split.names()[index]
    digital = record_signal(split, index, split_labels(split, len(_records(folder)))[index])
    val = scipy.io.loadmat(str(folder / f"{name}.mat"))["val"]
    assert val.shape == (1, digital.shape[0]) and val.dtype == np.int16
    np.testing.assert_array_equal(val.T, digital)
    record = wfdb.rdrecord(str(folder / name), physical=False)
    assert record.fs == 300 and record.sig_name == ["ECG"] and record.units == ["mV"]
    np.testing.assert_array_equal(record.d_signal, digital)
    assert 9 * 300 <= digital.shape[0] <= 20 * 300


def test_the_shipped_answers_are_what_the_baseline_prints_for_every_training_record() -> None:
    lines = []
    for record in _records(DATA / "training"):
        done = subprocess.run(
            [sys.executable, str(BASELINE_DIR / "classify.py"), record],
            cwd=DATA / "training",
            capture_output=True,
            text=True,
            check=True,
        )
        lines.append(done.stdout)
    assert "".join(lines) == (BASELINE_DIR / "answers.txt").read_text()


def test_train_py_reproduces_the_committed_thresholds(tmp_path: Path) -> None:
    out = tmp_path / "model.json"
    subprocess.run(
        [sys.executable, str(BASELINE_DIR / "train.py"), str(DATA / "training"), "--out", str(out)],
        capture_output=True,
        check=True,
    )
    assert out.read_bytes() == (BASELINE_DIR / "model.json").read_bytes()
    assert set(json.loads(out.read_text())) == {
        "busy",
        "irregular",
        "jumps",
        "rate_low",
        "rate_high",
    }


def test_the_baseline_beats_the_trivial_entry_on_the_hidden_records() -> None:
    classify = _load_classify()
    model = classify.load_model(BASELINE_DIR / "model.json")
    truth = _reference(DATA / "test-reference")
    answers = {
        record: classify.decide(
            classify.features(*classify.read_record(DATA / "test", record)), model
        )
        for record in truth
    }
    baseline = score_2017(truth, answers)
    trivial = score_2017(truth, dict.fromkeys(truth, "N"))
    assert baseline.score > trivial.score + 0.3
    assert min(baseline.f1[label] for label in "NA~") > 0.6


def test_the_trivial_entry_answers_normal_for_every_training_record() -> None:
    lines = (TRIVIAL_DIR / "answers.txt").read_text().splitlines()
    assert lines == [f"{r},N" for r in _records(DATA / "training")]


def test_the_challenge_file_loads_with_the_shared_answers_file() -> None:
    challenge = load_challenge(CHALLENGE_DIR)
    assert challenge.name == "physionet2017"
    assert challenge.protocol.kind == "records"
    assert challenge.protocol.appended == "answers.txt"  # type: ignore[attr-defined]
    assert isinstance(challenge.environment, EnvironmentSpec)
    assert challenge.environment.name == "physionet"
    assert "octave-signal" in challenge.environment.debian.packages


def test_shared_answers_need_a_shared_output() -> None:
    from pydantic import ValidationError

    from proctor.protocols.records import RecordsProtocol

    shared = RecordsProtocol.model_validate(
        {"kind": "records", "output": "answers.txt", "answers": "answers.txt"}
    )
    assert shared.appended == "answers.txt"
    assert RecordsProtocol.model_validate({"kind": "records"}).appended is None
    with pytest.raises(ValidationError, match="only an output appended"):
        RecordsProtocol.model_validate(
            {"kind": "records", "output": "{record}.vec", "answers": "answers.txt"}
        )
    with pytest.raises(ValidationError, match="no other field"):
        RecordsProtocol.model_validate({"kind": "records", "output": "{name}.txt"})
