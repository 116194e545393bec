"""The fast path of CSV tables reads what the careful reader reads, and declines the rest.

A number the fast path accepts is Python's ``float()`` of the field, bit for bit; anything
unusual (quotes, a lone carriage return, blank lines, repeated, missing or unknown ids, a bad
field count) makes it decline, so the careful reader names the file and the line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.formats.table_arrow import read_clean, read_matched
from proctor.formats.table_csv import TableFormatError, read_table
from proctor.scoring.table import TableOptions, check_prediction
from proctor.scoring.table_metrics import score_table

FIXTURE = HealthCheck.function_scoped_fixture
FIELD = st.text(alphabet="0123456789.-+eE_ naif", min_size=0, max_size=25).filter(
    lambda text: "," not in text and "\n" not in text
)


def _float_or_none(text: str) -> float | None:
    if "_" in text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(FIELD, min_size=1, max_size=15))
def test_a_number_read_fast_is_float_of_the_field_or_declined(
    texts: list[str], tmp_path: Path
) -> None:
    path = tmp_path / "t.csv"
    path.write_text("id,target\n" + "".join(f"r{i},{text}\n" for i, text in enumerate(texts)))
    table = read_clean(path)
    values = None if table is None else table.floats("target")
    expected = [_float_or_none(text) for text in texts]
    if values is not None:
        assert None not in expected
        assert values.tobytes() == np.array(expected, dtype=np.float64).tobytes()


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(numbers=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=30))
def test_numbers_as_pandas_writes_them_are_read_fast_and_exactly(
    numbers: list[float], tmp_path: Path
) -> None:
    path = tmp_path / "t.csv"
    path.write_text("id,target\n" + "".join(f"r{i},{x!r}\n" for i, x in enumerate(numbers)))
    table = read_clean(path)
    assert table is not None
    values = table.floats("target")
    assert values is not None
    assert values.tobytes() == np.array(numbers, dtype=np.float64).tobytes()


def _pair(tmp_path: Path, solution: str, prediction: str) -> tuple[Path, Path]:
    (tmp_path / "s.csv").write_bytes(solution.encode())
    (tmp_path / "p.csv").write_bytes(prediction.encode())
    return tmp_path / "s.csv", tmp_path / "p.csv"


SOLUTION = "id,target\nb,1\na,0\nc,1\n"


@pytest.mark.parametrize(
    ("solution", "prediction", "accuracy"),
    [
        (SOLUTION, "id,target\nb,1\na,0\nc,1\n", 1.0),
        (SOLUTION, "\ufeffid,target\r\nc,1\r\nb,0.0\r\na,0", 2 / 3),
        ("id,target\na,0\nb,1\n", "target,id\n1,b\n0,a\n", 1.0),
    ],
)
def test_clean_files_take_the_fast_path(
    tmp_path: Path, solution: str, prediction: str, accuracy: float
) -> None:
    truth, given_path = _pair(tmp_path, solution, prediction)
    assert read_matched(truth, given_path, "id") is not None
    result = score_table(truth, given_path, TableOptions(metric="accuracy"))
    assert (result.value, result.rows) == (accuracy, read_table(truth).rows)


@pytest.mark.parametrize(
    ("prediction", "line"),
    [
        ('id,target\n"b",1\na,0\nc,1\n', None),  # quotes: the csv module reads them
        ("id,target\nb,1\ra,0\nc,1\n", 2),  # a lone carriage return
        ("id,target\nb,1\n\na,0\nc,1\n", 3),  # a blank line
        ("id,target\nb,1\na,0\nc,1\n\n\n", None),  # blank lines at the end are dropped
        ("id,target\nb,1\na,0,0\nc,1\n", 3),  # a field too many
        ("id,target\nb,1\na,0\nb,1\n", 4),  # a repeated id
        ("id,target\nb,1\na,0\n", 0),  # a missing id
        ("id,target\nb,1\na,0\nc,1\nd,0\n", 5),  # an unknown id
        ("id,id\nb,1\n", 1),  # a repeated column name
        ("id,target\n", 0),  # no rows
    ],
)
def test_unusual_files_are_left_to_the_careful_reader(
    tmp_path: Path, prediction: str, line: int | None
) -> None:
    truth, given_path = _pair(tmp_path, SOLUTION, prediction)
    assert read_matched(truth, given_path, "id") is None
    options = TableOptions(metric="accuracy")
    if line is None:
        assert score_table(truth, given_path, options).rows == 3
        return
    with pytest.raises(TableFormatError) as caught:
        score_table(truth, given_path, options)
    assert (caught.value.path, caught.value.line) == (given_path, line)


def test_a_field_that_is_no_number_is_refused_with_its_line(tmp_path: Path) -> None:
    truth, given_path = _pair(tmp_path, "id,target\na,1.5\nb,2\n", "id,target\na,1.5\nb, 2x\n")
    assert read_matched(truth, given_path, "id") is not None
    with pytest.raises(TableFormatError) as caught:
        score_table(truth, given_path, TableOptions(metric="rmse"))
    assert (caught.value.path, caught.value.line) == (given_path, 3)
    assert "' 2x'" in caught.value.problem and "write a number" in caught.value.problem


def test_spaces_around_a_number_are_read_as_float_reads_them(tmp_path: Path) -> None:
    truth, given_path = _pair(tmp_path, "id,target\na,1.5\nb,2\n", "id,target\na, 1.5\nb,2 \n")
    assert score_table(truth, given_path, TableOptions(metric="rmse")).value == 0.0


RNG = np.random.default_rng(11)
ROWS = 40


def _write_quoted_and_clean(tmp_path: Path, column: list[str], name: str) -> tuple[Path, Path]:
    """The same table twice: clean, and with its first id quoted (only the careful reader)."""
    order = RNG.permutation(ROWS)
    rows = [f"r{i:02d},{column[i]}\n" for i in order]
    clean, quoted = tmp_path / f"{name}.csv", tmp_path / f"{name}-q.csv"
    clean.write_text("id,target\n" + "".join(rows))
    quoted.write_text('id,target\n"' + rows[0].replace(",", '",', 1) + "".join(rows[1:]))
    return clean, quoted


@pytest.mark.parametrize(
    ("metric", "positive"),
    [
        ("accuracy", None),
        ("f1_macro", None),
        ("rmse", None),
        ("r2", None),
        ("spearman", None),
        ("roc_auc", "cat"),
        ("average_precision", "dog"),
        ("log_loss", "cat"),
    ],
)
def test_the_fast_path_gives_the_careful_readers_value(
    tmp_path: Path, metric: str, positive: str | None
) -> None:
    if positive is not None:
        truth = [str(label) for label in RNG.choice(["cat", "dog"], ROWS)]
        given = [repr(float(x)) for x in RNG.random(ROWS)]
    elif metric in ("accuracy", "f1_macro"):
        truth = [str(x) for x in RNG.integers(0, 3, ROWS)]
        given = [f"{x}.0" for x in RNG.integers(0, 3, ROWS)]
    else:
        truth = [repr(float(x)) for x in RNG.normal(0, 1, ROWS)]
        given = [f"{float(x):.3e}" for x in RNG.normal(0, 1, ROWS)]
    solution, _ = _write_quoted_and_clean(tmp_path, truth, "s")
    clean, quoted = _write_quoted_and_clean(tmp_path, given, "p")
    options = TableOptions(metric=metric, positive=positive)
    assert read_matched(solution, clean, "id") is not None
    assert read_matched(solution, quoted, "id") is None
    fast, careful = score_table(solution, clean, options), score_table(solution, quoted, options)
    assert (fast.value, fast.rows) == (careful.value, careful.rows)


@pytest.mark.parametrize(
    ("text", "metric", "problem"),
    [
        ("id,target\na,1\nb,0\n", "accuracy", None),
        ('id,target\n"a",1\nb,0\n', "accuracy", None),
        ("id,score\na,0.5\n", "roc_auc", None),
        ("id,score\na,0.5\n", "accuracy", "p.csv: no column 'target' in the header"),
        ("id,target\na,1\nb,0,1\n", "accuracy", "p.csv, line 3: 3 fields"),
        ("id\n", "accuracy", "p.csv: no rows below the header"),
    ],
)
def test_the_output_check_reads_clean_files_fast_and_names_the_rest(
    tmp_path: Path, text: str, metric: str, problem: str | None
) -> None:
    (tmp_path / "p.csv").write_text(text)
    found = check_prediction(TableOptions(metric=metric, prediction="p.csv"), tmp_path)
    assert found == problem if problem is None else (found or "").startswith(problem)
