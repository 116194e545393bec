"""``proctor.services.local.autowsl``: the AutoWSL ROC AUC use case."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from proctor.errors import InputFileError
from proctor.services.local.autowsl import score_auc


def write_csv(path: Path, values: list[float | str]) -> Path:
    path.write_text("label\n" + "".join(f"{v}\n" for v in values))
    return path


def test_a_solution_folder_and_a_prediction_give_the_auc(tmp_path: Path) -> None:
    (tmp_path / "ref").mkdir()
    write_csv(tmp_path / "ref" / "data.solution", [0, 0, 1, 1])
    prediction = write_csv(tmp_path / "pred.csv", [0.1, 0.4, 0.35, 0.8])
    assert score_auc(tmp_path / "ref", prediction) == 0.75


def test_a_single_class_solution_gives_nan_without_a_warning(tmp_path: Path) -> None:
    solution = write_csv(tmp_path / "data.solution", [1, 1, 1])
    prediction = write_csv(tmp_path / "pred.csv", [0.1, 0.4, 0.35])
    assert math.isnan(score_auc(solution, prediction))  # warnings are errors in the tests


@pytest.mark.parametrize(
    ("solution", "prediction", "message"),
    [
        ([0, 1, 1], [0.2, 0.3], "pred.csv has 2 rows but .*data.solution has 3"),
        ([0, 1, 2], [0.2, 0.3, 0.4], "expected two classes"),
        ([0, 1], [0.2, "x"], "line 3"),
    ],
)
def test_files_the_metric_cannot_score_are_input_file_errors(
    tmp_path: Path, solution: list[float | str], prediction: list[float | str], message: str
) -> None:
    truth = write_csv(tmp_path / "data.solution", solution)
    scores = write_csv(tmp_path / "pred.csv", prediction)
    with pytest.raises(InputFileError, match=message):
        score_auc(truth, scores)
