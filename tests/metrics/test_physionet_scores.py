import math

import pytest

from proctor.metrics._validation import MetricInputError, UndefinedMetricWarning
from proctor.metrics.physionet_scores import (
    parse_answer_lines,
    score_2015,
    score_2016,
    score_2017,
)


def test_2015_score_weights_false_negatives_five_times_and_missing_is_false_alarm():
    reference = {"a": "1", "b": "1", "c": "0", "d": "0", "e": "1"}
    answers = {"a": "1", "b": "0", "c": "1", "d": "0"}  # e missing -> "0" (FN)
    result = score_2015(reference, answers)
    assert (result.tp, result.tn, result.fp, result.fn) == (1, 1, 1, 2)
    assert result.score == pytest.approx(2 / (2 + 1 + 5 * 2))


def test_2016_counts_unsure_and_missing_as_half():
    reference = {"a": "1", "b": "1", "c": "-1", "d": "-1"}
    answers = {"a": "1", "b": "0", "c": "-1"}  # d missing -> unsure
    result = score_2016(reference, answers)
    assert result.sensitivity == pytest.approx(0.75)
    assert result.specificity == pytest.approx(0.75)
    assert result.macc == pytest.approx(0.75)


def test_2016_without_abnormal_records_is_nan_with_a_warning():
    with pytest.warns(UndefinedMetricWarning):
        result = score_2016({"a": "-1"}, {"a": "-1"})
    assert math.isnan(result.sensitivity) and math.isnan(result.macc)


def test_2017_f1_per_class_and_mean_of_n_a_o():
    reference = {"r1": "N", "r2": "N", "r3": "A", "r4": "O", "r5": "~"}
    answers = {"r1": "N", "r2": "A", "r3": "A", "r4": "O"}  # r5 missing -> "~"
    result = score_2017(reference, answers)
    assert result.f1["N"] == pytest.approx(2 * 1 / (2 + 1))
    assert result.f1["A"] == pytest.approx(2 * 1 / (1 + 2))
    assert result.f1["O"] == 1.0 and result.f1["~"] == 1.0
    assert result.score == pytest.approx((2 / 3 + 2 / 3 + 1) / 3)
    assert result.confusion[0] == (1, 1, 0, 0)


@pytest.mark.parametrize(
    ("reference", "answers", "message"),
    [
        ({"r1": "N"}, {"r1": "X"}, "allowed"),
        ({"r1": "N"}, {"r2": "N"}, "not in the reference"),
    ],
)
def test_2017_rejects_unknown_labels_and_records(reference, answers, message):
    with pytest.raises(MetricInputError, match=message):
        score_2017(reference, answers)


def test_answer_lines_accept_crlf_and_blank_lines():
    assert parse_answer_lines("A00001,N\r\n\r\nA00002,~\r\n") == {"A00001": "N", "A00002": "~"}


@pytest.mark.parametrize(
    ("text", "message"),
    [("A1,N\nA2\n", "line 2: expected 'RECORD,LABEL'"), ("A1,N\nA1,A\n", "answered twice")],
)
def test_answer_lines_errors_name_the_line(text, message):
    with pytest.raises(MetricInputError, match=message):
        parse_answer_lines(text, source="answers.txt")
