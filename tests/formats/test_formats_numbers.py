"""The column reader gives exactly Python's ``float()``, and finds the first bad field."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.formats._numbers import parse_floats

FORMATS = ["{!r}", "{:.3f}", "{:.6g}", "{:e}", "{:.17g}", "{:.20f}", "{:.1E}", "{:+.4f}"]


def _same_bits(ours: np.ndarray, expected: list[float]) -> bool:
    return ours.tobytes() == np.array(expected, dtype=np.float64).tobytes()


@settings(max_examples=300, deadline=None)
@given(
    numbers=st.lists(
        st.one_of(
            st.floats(allow_nan=False, allow_infinity=False),
            st.floats(0, 1),
            st.integers(-(10**20), 10**20).map(float),
        ),
        min_size=1,
        max_size=40,
    ),
    style=st.sampled_from(FORMATS),
)
def test_every_field_reads_as_python_float_reads_it(numbers: list[float], style: str) -> None:
    fields = [style.format(number).encode() for number in numbers]
    values, bad = parse_floats(fields)
    assert bad is None
    assert _same_bits(values, [float(field) for field in fields])


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(
        st.text(alphabet="0123456789.-+eE", min_size=0, max_size=25), min_size=1, max_size=20
    )
)
def test_any_text_is_read_as_float_reads_it_or_found_bad(texts: list[str]) -> None:
    fields = [text.encode() for text in texts]
    values, bad = parse_floats(fields)
    expected = []
    first_bad = None
    for index, text in enumerate(texts):
        try:
            expected.append(float(text))
        except ValueError:
            first_bad = index
            break
    assert bad == first_bad
    if bad is None:
        assert _same_bits(values, expected)


def test_special_and_spaced_forms_go_through_float() -> None:
    values, bad = parse_floats([b" 0.5", b"nan", b"-inf", b"1e400", b"0.1e-30"])
    assert bad is None
    assert values[0] == 0.5 and np.isnan(values[1]) and values[2] == -np.inf
    assert values[3] == np.inf and values[4] == float("0.1e-30")


def test_underscores_and_words_are_not_numbers() -> None:
    assert parse_floats([b"1", b"1_000"])[1] == 1
    assert parse_floats([b"cat"])[1] == 0
    assert parse_floats([b""])[1] == 0
