"""``proctor.services.local.physionet``: the 2018 and 2017 scoring use cases, without printing."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from proctor.errors import InputFileError, UsageError
from proctor.formats.arousal_mat import write_arousal_reference
from proctor.metrics._validation import MetricInputError
from proctor.services.local.input_errors import input_errors_as
from proctor.services.local.physionet import ArousalScoring, score_physionet2017


@pytest.fixture
def references(tmp_path: Path) -> Path:
    folder = tmp_path / "training"
    for record in ("r1", "r2"):
        labels = np.zeros(100)
        labels[20:50] = 1
        (folder / record).mkdir(parents=True)
        write_arousal_reference(folder / record / f"{record}-arousal.mat", labels)
    return folder


def vec(folder: Path, record: str, lines: list[str]) -> str:
    path = folder / f"{record}.vec"
    path.write_text("".join(f"{line}\n" for line in lines))
    return str(path)


def test_a_failed_record_is_a_row_with_its_error_and_scoring_goes_on(
    references: Path, tmp_path: Path
) -> None:
    scoring = ArousalScoring(references)
    bad = scoring.score(vec(tmp_path, "r1", ["0.5", "abc"]))
    good = scoring.score(vec(tmp_path, "r2", ["0.1"] * 20 + ["0.9"] * 30 + ["0.1"] * 50))
    assert bad.record == "r1"
    assert bad.error is not None
    assert "line 2" in bad.error
    assert math.isnan(bad.auroc)
    assert math.isnan(bad.auprc)
    assert (good.error, good.warned, good.auroc, good.auprc) == (None, False, 1.0, 1.0)
    overall = scoring.overall()
    assert (overall.auroc, overall.auprc) == (good.auroc, good.auprc)


def test_a_short_file_with_a_bad_value_warns_and_fails(references: Path, tmp_path: Path) -> None:
    row = ArousalScoring(references).score(vec(tmp_path, "r1", ["0.5", "nan"]))
    assert row.warned
    assert row.error is not None


def test_a_short_file_warns_and_is_scored(references: Path, tmp_path: Path) -> None:
    row = ArousalScoring(references).score(vec(tmp_path, "r1", ["0.5"] * 10))
    assert row.warned
    assert row.error is None


def test_a_record_without_reference_is_a_row_naming_the_missing_file(
    references: Path, tmp_path: Path
) -> None:
    row = ArousalScoring(references).score(vec(tmp_path, "r9", ["0.5"]))
    assert row.error is not None
    assert "r9-arousal.mat: reference file not found" in row.error
    assert not row.warned


def test_the_overall_scores_are_nan_before_any_record(references: Path) -> None:
    overall = ArousalScoring(references).overall()
    assert math.isnan(overall.auroc)
    assert math.isnan(overall.auprc)


def test_2017_scores_answers_against_a_reference(tmp_path: Path) -> None:
    reference = tmp_path / "REFERENCE.csv"
    reference.write_text("A1,N\nA2,A\nA3,O\nA4,~\n")
    answers = tmp_path / "answers.txt"
    answers.write_text("A1,N\nA2,A\nA3,N\n")
    result = score_physionet2017(answers, reference)
    assert result.f1["A"] == 1.0
    assert result.confusion[2][0] == 1  # O answered N
    assert result.confusion[3][3] == 1  # a missing answer counts as noise


@pytest.mark.parametrize(
    ("answers_text", "message"),
    [
        ("A1;N\n", r"answers.txt, line 1: expected 'RECORD,LABEL'"),
        ("A1,N\nA1,A\n", "answered twice"),
        ("B7,N\n", "not in the reference"),
        ("A1,X\n", "has label 'X'"),
    ],
)
def test_2017_refusals_are_input_file_errors(
    tmp_path: Path, answers_text: str, message: str
) -> None:
    reference = tmp_path / "REFERENCE.csv"
    reference.write_text("A1,N\n")
    answers = tmp_path / "answers.txt"
    answers.write_text(answers_text)
    with pytest.raises(InputFileError, match=message):
        score_physionet2017(answers, reference)


def test_2017_an_unreadable_reference_is_an_input_file_error(tmp_path: Path) -> None:
    answers = tmp_path / "answers.txt"
    answers.write_text("A1,N\n")
    with pytest.raises(InputFileError, match="cannot read the reference file"):
        score_physionet2017(answers, tmp_path / "missing.csv")


def test_a_metric_refusal_is_raised_as_the_asked_kind_with_its_message_and_cause() -> None:
    refusal = MetricInputError("y_true must be 1-D")
    with (
        pytest.raises(UsageError, match=r"^y_true must be 1-D$") as caught,
        input_errors_as(UsageError),
    ):
        raise refusal
    assert type(caught.value) is UsageError
    assert caught.value.__cause__ is refusal


def test_other_errors_pass_through_untranslated() -> None:
    with pytest.raises(KeyError), input_errors_as(InputFileError):
        raise KeyError("x")
