import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.formats.vec import (
    VecFormatError,
    VecLengthWarning,
    read_vec,
    read_vec_bins,
)
from proctor.metrics.physionet2018 import bin_indices


def reference(text: bytes, length: int) -> np.ndarray:
    """Python float(line) then float32, lines beyond ``length`` ignored, missing ones 0."""
    lines = text.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = np.zeros(length, dtype=np.float32)
    for i, line in enumerate(lines[:length]):
        out[i] = np.float32(float(line))
    return out


def read_quietly(path: Path, length: int) -> tuple[np.ndarray, list[str]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VecLengthWarning)
        return read_vec(path, length)


@pytest.mark.parametrize(
    "text",
    [
        b"0.500\n1.000\n0.000\n",
        b"0.5\n1\n1.0000\n5e-1\n",
        b"0.123\r\n0.456\r\n",
        b" 0.25\n.5\n0.\n+0.75\n",
        b"0.100\n0.200\n0.3",
        b"0.100\n0.200\n0.300\n0.4\n",
        b"0.30000002682209014892578125000000000001\n0.1234567890123456789\n",
        b"1_0e-1\n-0\n",
    ],
)
def test_values_are_bit_identical_to_python_float_then_float32(tmp_path, text):
    path = tmp_path / "r.vec"
    path.write_bytes(text)
    length = text.count(b"\n") + (0 if text.endswith(b"\n") else 1)
    values, notes = read_vec(path, length)
    assert values.tobytes() == reference(text, length).tobytes()
    assert notes == []
    bins, _ = read_vec_bins(path, length)
    assert (bins == bin_indices(values)).all()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=1, max_size=300))
def test_fixed_three_decimal_files_read_exactly(tmp_path_factory, thousandths):
    text = "".join("%.3f\n" % (k / 1000) for k in thousandths).encode()
    path = tmp_path_factory.mktemp("v") / "r.vec"
    path.write_bytes(text)
    values, _ = read_vec(path, len(thousandths))
    assert values.tobytes() == reference(text, len(thousandths)).tobytes()
    bins, _ = read_vec_bins(path, len(thousandths))
    assert bins.tolist() == thousandths


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=50), st.sampled_from(["%r", "%.6g", "%.17e"]))
def test_any_number_layout_reads_like_python_float(tmp_path_factory, numbers, fmt):
    text = "".join((fmt % x) + "\n" for x in numbers).encode()
    path = tmp_path_factory.mktemp("v") / "r.vec"
    path.write_bytes(text)
    values, _ = read_vec(path, len(numbers))
    assert values.tobytes() == reference(text, len(numbers)).tobytes()


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        (b"0.100\n\n0.300\n", 2, "empty"),
        (b"0.100\n0.200\nabc\n", 3, "cannot read 'abc'"),
        (b"probability\n0.1\n", 1, "cannot read 'probability'"),
        (b"0.100\nnan\n", 2, "NaN"),
        (b"0.1\n0.2\n1.5\n", 3, "outside"),
        (b"0.100\n-0.001\n", 2, "outside"),
        (b"0.100\n1.001\n", 2, "outside"),
        (b"0.1\ninf\n", 2, "outside"),
    ],
)
def test_bad_lines_raise_an_error_naming_file_and_line(tmp_path, text, line, problem):
    path = tmp_path / "rec.vec"
    path.write_bytes(text)
    with pytest.raises(VecFormatError, match=problem) as caught:
        read_quietly(path, 3)
    assert caught.value.line == line
    assert f"{path}, line {line}" in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_lines_beyond_the_reference_length_are_never_parsed(tmp_path):
    path = tmp_path / "r.vec"
    path.write_bytes(b"0.100\n0.200\ngarbage\n")
    with pytest.warns(VecLengthWarning, match="wrong number of samples"):
        values, notes = read_vec(path, 2)
    assert values.tolist() == pytest.approx([0.1, 0.2])
    assert "wrong number of samples" in notes[0]


def test_missing_lines_stay_zero_with_a_warning(tmp_path):
    path = tmp_path / "r.vec"
    path.write_bytes(b"0.500\n")
    with pytest.warns(VecLengthWarning):
        values, notes = read_vec(path, 3)
    assert values.tolist() == [0.5, 0.0, 0.0]
    assert len(notes) == 1


def test_exact_length_gives_no_warning(tmp_path):
    path = tmp_path / "r.vec"
    path.write_bytes(b"0.500\n0.250\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_vec(path, 2)[1] == []


def test_a_missing_file_is_a_format_error_naming_it(tmp_path):
    with pytest.raises(VecFormatError, match="cannot read the file"):
        read_vec(tmp_path / "absent.vec", 3)


def test_length_must_be_a_non_negative_integer(tmp_path):
    path = tmp_path / "r.vec"
    path.write_bytes(b"0.5\n")
    with pytest.raises(ValueError, match="length"):
        read_vec(path, -1)


def test_fast_path_switches_to_general_when_the_layout_changes_late(tmp_path):
    rows = ["%.3f\n" % (i % 1000 / 1000) for i in range(300_000)] + ["0.5\n", "1\n"]
    text = "".join(rows).encode()
    path = tmp_path / "r.vec"
    path.write_bytes(text)
    values, _ = read_vec(path, len(rows))
    assert values.tobytes() == reference(text, len(rows)).tobytes()


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (b"-0.0002\n", True),
        (b"-0.0005\n", True),
        (b"-0.00050001\n", False),
        (b"1.0004\n", True),
        (b"1.0005\n", True),
        (b"1.00050001\n", True),  # float32 rounds it onto the edge
        (b"1.0006\n", False),
        (b"-0.000\n", True),
    ],
)
def test_values_just_outside_0_1_are_kept_exactly_when_numpy_histogram_keeps_them(
    tmp_path, text, kept
):
    path = tmp_path / "r.vec"
    path.write_bytes(text)
    value = reference(text, 1)
    counted = np.histogram(value, bins=1001, range=(-0.0005, 1.0005))[0]
    assert bool(counted.sum()) == kept
    if kept:
        assert read_quietly(path, 1)[0].tobytes() == value.tobytes()
        assert read_vec_bins(path, 1)[0].tolist() == [int(np.argmax(counted))]
    else:
        with pytest.raises(VecFormatError, match="outside"):
            read_quietly(path, 1)


def test_a_bad_value_is_reported_after_the_length_warning(tmp_path):
    path = tmp_path / "r.vec"
    path.write_bytes(b"0.100\n1.500\n")
    with pytest.warns(VecLengthWarning), pytest.raises(VecFormatError, match="outside") as caught:
        read_vec(path, 3)
    assert caught.value.line == 2
    assert "wrong number of samples" in caught.value.length_notes[0]


def test_a_line_that_is_not_a_number_wins_over_an_earlier_bad_value(tmp_path):
    path = tmp_path / "r.vec"
    path.write_bytes(b"1.500\n0.100\nabc\n")
    with pytest.raises(VecFormatError, match="cannot read 'abc'") as caught:
        read_quietly(path, 5)
    assert caught.value.line == 3
    assert caught.value.length_notes == []
