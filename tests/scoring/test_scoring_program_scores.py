"""How a scoring program's ``scores.json`` is read: declared metrics, finite numbers only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from proctor.pipeline.program_results import read_capped_in
from proctor.scoring.program_scores import parse_scores_file, read_scores
from proctor.spec.scorer import ScoringProgram

SPEC = ScoringProgram.model_validate(
    {
        "program": "/scoring",
        "command": ["python3", "score.py"],
        "metrics": {"mae": {"direction": "lower"}, "n": {"direction": "neutral"}},
    }
)


def test_declared_metrics_and_cases_are_kept_and_the_rest_dropped_with_warnings() -> None:
    data = b'{"mae": 1.5, "n": 3, "extra": 1, "cases": {"a": {"mae": 1, "x": 2}, "z": {}}}'
    summary, cases, warnings = read_scores(data, SPEC, ["a", "b"])
    assert summary == {"mae": 1.5, "n": 3.0}
    assert cases == {"a": {"mae": 1.0}}
    assert warnings == [
        "'extra' is not a metric the YAML declares: left out",
        "cases.a.x: not a declared metric: left out",
        "case 'z' is not a case of the task: left out",
    ]


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b'{"mae": Infinity, "n": 1}', "metric 'mae' is inf, not a finite number"),
        (b'{"mae": -Infinity, "n": 1}', "metric 'mae' is -inf, not a finite number"),
        (b'{"mae": true, "n": 1}', "metric 'mae' is bool, not a number"),
        (b'{"mae": null, "n": 1}', "metric 'mae' is NoneType, not a number"),
        (b'{"mae": 1}', "declared metric missing: n"),
        (b"[1, 2]", "must be a JSON object"),
        (b"\xff\xfe", "not a JSON document"),
        (b"[" * 100000, "not a JSON document"),
        (b'{"mae": 1, "n": 1, "cases": []}', '"cases" must be an object'),
        (b'{"mae": 1, "n": 1, "cases": {"a": 1}}', "cases.a must be an object"),
        (b'{"mae": 1, "n": 1, "cases": {"a": {"mae": NaN}}}', "cases.a.mae is nan"),
    ],
)
def test_an_unusable_scores_json_says_why(data: bytes, words: str) -> None:
    with pytest.raises(ValueError, match=None) as caught:
        read_scores(data, SPEC, ["a"])
    assert words in str(caught.value)


def test_scores_json_is_read_without_following_links_and_within_its_cap(tmp_path: Path) -> None:
    (tmp_path / "target").write_text('{"mae": 1}')
    (tmp_path / "scores.json").symlink_to(tmp_path / "target")
    (tmp_path / "big.json").write_bytes(b" " * 101)
    (tmp_path / "folder").mkdir()
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        data, problem = read_capped_in(folder, "scores.json", 100)
        assert data is None and problem is not None and "cannot be opened" in problem
        assert read_capped_in(folder, "big.json", 100) == (None, "big.json is over 100 bytes")
        assert read_capped_in(folder, "missing.json", 100) == (None, None)
        problem = read_capped_in(folder, "folder", 100)[1]
        assert problem is not None and "folder is not a regular file" in problem
        assert read_capped_in(folder, "target", 100) == (b'{"mae": 1}', None)
    finally:
        os.close(folder)


def test_booleans_read_as_numbers_when_the_scorer_says_so() -> None:
    codabench_like = SPEC.model_copy(update={"booleans": "numbers"})
    summary, cases, _ = read_scores(b'{"mae": true, "n": false, "cases": {"a": {"mae": false}}}',
                                    codabench_like, ["a"])  # fmt: skip
    assert summary == {"mae": 1.0, "n": 0.0} and cases == {"a": {"mae": 0.0}}


def test_text_spelling_a_number_reads_as_it_when_the_scorer_says_so() -> None:
    """``1e-05`` in scores.txt is text to YAML; Codabench's decimal column stores its number."""
    codabench_like = SPEC.model_copy(update={"strings": "numbers"})
    data = b"mae: 1e-05\nn: ' 3 '\n"
    summary, _, _ = read_scores(parse_scores_file(data, "scores.txt"), codabench_like, [])
    assert summary == {"mae": 1e-05, "n": 3.0}
    with pytest.raises(ValueError, match="metric 'mae' is str, not a number"):
        read_scores(parse_scores_file(data, "scores.txt"), SPEC, [])  # refused by default
    with pytest.raises(ValueError, match="the text 'abc', not a number"):
        read_scores({"mae": "abc", "n": 1}, codabench_like, [])
    for text in ("NaN", "-Infinity", "1e999"):  # 1e999: a finite decimal, no finite float
        with pytest.raises(ValueError, match="not a finite number"):
            read_scores({"mae": text, "n": 1}, codabench_like, [])


def test_a_metric_not_written_has_no_value_when_the_scorer_says_so() -> None:
    codabench_like = ScoringProgram.model_validate(
        {
            **SPEC.model_dump(),
            "metrics": {**SPEC.model_dump()["metrics"], "mean": {"direction": "lower"}},
            "computed": {"mean": {"operation": "avg", "of": ["mae", "n"]}},
            "missing_metrics": "empty",
        }
    )
    summary, _, warnings = read_scores(b'{"mae": 2}', codabench_like, [])
    assert summary == {"mae": 2.0}  # n has no value, nor the mean computed from it
    assert warnings == [
        "'n': declared but not written: no value (missing_metrics: empty)",
        "'mean': computed from n, which has no value",
    ]
    with pytest.raises(ValueError, match="declared metric"):  # nothing declared written
        read_scores(b'{"other": 2}', codabench_like, [])
    with pytest.raises(ValueError, match=r"declared metric.*missing: n"):  # the default
        read_scores(b'{"mae": 2}', SPEC, [])
