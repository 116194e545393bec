"""The 2017/2018 ``.hea`` + ``.mat`` writer and reader, and the shared ``answers.txt`` lines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.io
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from proctor.challenges.physionet2018.generate import quiet_wfdb
from proctor.errors import InputFileError
from proctor.formats.wfdb_mat import SignalSpec, read_mat_signals, write_mat_record
from proctor.protocols.answer_lines import compare_lines, last_line

with quiet_wfdb():
    import wfdb

SPECS = [SignalSpec("ECG", "mV", 1000.0), SignalSpec("SaO2", "%", 100.0)]


@settings(max_examples=25, deadline=None)
@given(arrays(np.int16, st.tuples(st.integers(2, 400), st.just(2))))
def test_records_round_trip_through_scipy_wfdb_and_the_reader(digital: np.ndarray) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        write_mat_record(folder, "r1", digital, fs=300, signals=SPECS)
        np.testing.assert_array_equal(scipy.io.loadmat(str(folder / "r1.mat"))["val"], digital.T)
        np.testing.assert_array_equal(read_mat_signals(folder / "r1.mat"), digital)
        with quiet_wfdb():
            record = wfdb.rdrecord(str(folder / "r1"), physical=False)
        np.testing.assert_array_equal(record.d_signal, digital)
        assert record.sig_name == ["ECG", "SaO2"] and record.fs == 300


def test_a_file_that_is_not_a_v4_val_matrix_is_refused_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "x.mat"
    scipy.io.savemat(str(bad), {"other": np.zeros((2, 3))})
    with pytest.raises(InputFileError, match=r"x\.mat: not a MATLAB v4 int16 matrix 'val'"):
        read_mat_signals(bad)


def test_the_writer_refuses_samples_that_do_not_match_the_channels(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="int16 samples × 2 channels"):
        write_mat_record(tmp_path, "r", np.zeros((5, 3), np.int16), fs=1, signals=SPECS)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"A1,N\nA2,A\n", "A"),
        (b"A2,O\r\nA1,N\r\nA2,A\r\n", "A"),  # the last line wins; CRLF dropped
        (b"A2,~", "~"),  # no final newline
        (b"A22,N\nA2 ,N\n", None),  # another record, or not the RECORD, prefix
        (b"", None),
    ],
)
def test_a_records_answer_is_its_last_appended_line(data: bytes, expected: str | None) -> None:
    found = last_line(data, "A2")
    assert (found and found.split(",")[1]) == expected


def test_lines_compare_by_fields_against_the_shipped_answers(tmp_path: Path) -> None:
    shipped = tmp_path / "answers.txt"
    shipped.write_bytes(b"A1,N\r\nA2,A\r\n")
    output = tmp_path / "A2.answers.txt"
    output.write_text("A2, A\n")
    assert compare_lines(output, shipped) is None
    output.write_text("A2,O\n")
    assert compare_lines(output, shipped) == (
        "wrote 'A2,O' where the shipped answers.txt says 'A2,A'"
    )
    output.write_text("A3,O\n")
    assert compare_lines(output, shipped) == "the shipped answers.txt has no line for A3"
