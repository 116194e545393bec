import subprocess
import sys
from pathlib import Path

import pytest

from proctor.protocols.compare import CompareSpec, compare_answer


@pytest.mark.parametrize(
    ("output", "answer", "kind", "tolerance", "verdict"),
    [
        (b"0.100\n0.200\n", b"0.100\n0.200\n", "exact", 0.0, None),
        (b"0.100\n0.200\n", b"0.100\n0.201\n", "exact", 0.0, "byte 11"),
        (b"a,N\r\nb,A\r\n", b"a,N\nb,A\n", "lines", 0.0, None),
        (b"a,N\nb,O\n", b"a,N\nb,A\n", "lines", 0.0, "line 2"),
        (b"0.1\n0.2\n", b"0.100\n0.2004\n", "numeric", 0.001, None),
        (b"0.1\n0.3\n", b"0.100\n0.200\n", "numeric", 0.001, "line 2"),
        (b"0.1\nnan\n", b"0.100\n0.200\n", "numeric", 0.001, "line 2"),
        (b"0.1\nabc\n", b"0.100\n0.200\n", "numeric", 0.001, "not a number"),
        (b"0.1\n", b"0.100\n0.200\n", "numeric", 0.001, "1 lines written, 2 expected"),
    ],
)
def test_outputs_are_compared_with_the_shipped_answers(
    output: bytes, answer: bytes, kind: str, tolerance: float, verdict: str | None
) -> None:
    result = compare_answer(output, answer, CompareSpec(kind=kind, tolerance=tolerance))  # type: ignore[arg-type]
    if verdict is None:
        assert result is None
    else:
        assert result is not None
        assert verdict in result


def test_a_nan_in_the_shipped_answer_matches_nothing() -> None:
    """Hardening item 14: an all-nan answer used to match any output."""
    spec = CompareSpec(kind="numeric", tolerance=0.001)
    problem = compare_answer(b"0.5\n", b"nan\n", spec)
    assert problem is not None and "shipped answer" in problem and "nan" in problem
    assert compare_answer(b"nan\n", b"nan\n", spec) is not None


@pytest.mark.slow
def test_a_huge_answer_of_short_lines_is_compared_in_bounded_memory(tmp_path: Path) -> None:
    """Hardening item 8: a 64 MiB answer took 1.9 GiB (28x) of the worker; now it streams."""
    lines = 8 << 20  # 16 MiB of "0\n": 448 MiB at the old 28x
    (tmp_path / "out").write_bytes(b"0\n" * lines)
    (tmp_path / "ans").write_bytes(b"0\n" * (lines - 1) + b"1\n")
    code = (
        "import re\n"
        "from pathlib import Path\n"
        "from proctor.protocols.compare import compare_files\n"
        "from proctor.protocols.compare import CompareSpec\n"
        f"d = Path({str(tmp_path)!r})\n"
        "print(compare_files(d / 'out', d / 'ans', CompareSpec(kind='numeric')))\n"
        # VmHWM: this process's own peak (ru_maxrss would count the parent before exec)
        "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    message, peak_kib = done.stdout.splitlines()
    assert message == f"line {lines}: 0 written, 1 expected (tolerance 0)"
    assert int(peak_kib) < 160 * 1024  # interpreter and numpy included


@pytest.mark.parametrize(
    ("output", "answer", "verdict"),
    [
        (b'{"b": [1, 2.0004], "a": "x"}', b'{"a": "x", "b": [1.0, 2]}', None),
        (b'{"a": "x", "b": [1, 2.01]}', b'{"a": "x", "b": [1, 2]}', "$.b[1]: 2.01 written"),
        (b'{"a": "y"}', b'{"a": "x"}', '$.a: "y" written, "x" expected'),
        (b'{"a": 1}', b'{"a": 1, "b": 2}', "$: key 'b' is missing"),
        (b'{"a": 1, "c": 2}', b'{"a": 1}', "$: key 'c' is not expected"),
        (b"[1, 2]", b"[1, 2, 3]", "$: 2 items written, 3 expected"),
        (b'{"a": true}', b'{"a": 1}', "$.a: true written, 1 expected"),
        (b'{"a": NaN}', b'{"a": 1}', "$.a: nan written"),
        (b"{oops", b"{}", "the output is not JSON"),
        (b"{}", b"{oops", "the shipped answer is not JSON"),
    ],
)
def test_json_answers_compare_as_values_with_a_numeric_tolerance(
    output: bytes, answer: bytes, verdict: str | None
) -> None:
    result = compare_answer(output, answer, CompareSpec(kind="json", tolerance=0.001))
    if verdict is None:
        assert result is None
    else:
        assert result is not None
        assert verdict in result


def test_a_json_output_of_too_many_values_is_refused_before_it_is_parsed() -> None:
    """``[[],[],...]`` swells some 24 times in memory: the worker refuses it unparsed."""
    import tracemalloc

    bomb = b"[" + b"[]," * 1_500_000 + b"[]]"
    tracemalloc.start()
    try:
        result = compare_answer(bomb, b"[]", CompareSpec(kind="json", tolerance=0.0))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result is not None
    assert "more than 1,000,000 values" in result
    assert peak < 16 * 1024**2, peak  # parsed, it would take some 100 MiB
    answer = compare_answer(b"[]", bomb, CompareSpec(kind="json", tolerance=0.0))
    assert answer is not None
    assert "shipped answer has more than" in answer
