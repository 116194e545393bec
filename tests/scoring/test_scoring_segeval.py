"""``proctor.scoring.segeval``: the tool's evaluation without its printing, for any face."""

from __future__ import annotations

from pathlib import Path

import nibabel as nib
import numpy as np
import pytest

from proctor.formats.volumes import VolumeReadError
from proctor.metrics.segmentation import METRICS
from proctor.metrics.segmentation_compat import SingularCovarianceError, selected_codes
from proctor.scoring.segeval import (
    SegevalRequest,
    SegevalResult,
    SegevalRun,
    SegevalStop,
    evaluate_segeval,
    start_segeval,
)


def write(path: Path, data: np.ndarray) -> str:
    nib.save(nib.Nifti1Image(data, np.diag([0.8, 0.8, 2.0, 1.0])), str(path))
    return str(path)


@pytest.fixture
def pair(tmp_path: Path) -> tuple[str, str]:
    truth = np.zeros((20, 20, 10), np.uint8)
    truth[5:12, 5:12, 3:7] = 1
    segment = np.zeros_like(truth)
    segment[6:14, 5:12, 3:6] = 1
    return write(tmp_path / "truth.nii.gz", truth), write(tmp_path / "seg.nii.gz", segment)


def request(truth: str, segment: str, use: str = "all") -> SegevalRequest:
    return SegevalRequest(truth, segment, dict(selected_codes(use)))


def test_a_complete_evaluation_holds_every_selected_value_in_the_tools_order(
    pair: tuple[str, str],
) -> None:
    result = evaluate_segeval(request(*pair))
    assert isinstance(result, SegevalResult)
    assert [value.code for value in result.values] == list(METRICS)
    assert (result.counts.truth, result.counts.segment, result.counts.both) == (196, 168, 126)
    assert result.shape == (20, 20, 10)
    assert result.spacing == pytest.approx((0.8, 0.8, 2.0))


def test_values_are_computed_as_they_are_taken(pair: tuple[str, str]) -> None:
    run = start_segeval(request(*pair, use="DICE,HDRFDST"))
    assert isinstance(run, SegevalRun)
    assert run.result().values == ()
    _, first = next(run.sections())
    assert [value.code for value in first] == ["DICE"]
    assert [value.code for value in run.result().values] == ["DICE"]


@pytest.mark.parametrize(
    ("shape", "fill", "message"),
    [
        ((4, 4, 4), 1, "Images are from different Sizes: fixedImage=4000 movingImage=64"),
        ((20, 20, 10), 3, "Moving image is empty!"),
    ],
)
def test_the_tools_stops_come_back_as_its_message(
    pair: tuple[str, str], tmp_path: Path, shape: tuple[int, ...], fill: int, message: str
) -> None:
    other = write(tmp_path / "other.nii.gz", np.full(shape, fill, np.uint8))
    assert evaluate_segeval(request(pair[0], other)) == SegevalStop(message)


def test_a_singular_mahalanobis_covariance_is_raised(tmp_path: Path) -> None:
    truth = np.zeros((5, 5, 5), np.uint8)
    segment = truth.copy()
    truth[2, 2, 2], segment[3, 2, 2] = 1, 1
    files = write(tmp_path / "a.nii", truth), write(tmp_path / "b.nii", segment)
    with pytest.raises(SingularCovarianceError):
        evaluate_segeval(request(*files, use="MAHLNBS"))


def test_an_unreadable_image_raises_naming_the_file(pair: tuple[str, str], tmp_path: Path) -> None:
    with pytest.raises(VolumeReadError, match=r"missing\.nii"):
        start_segeval(request(pair[0], str(tmp_path / "missing.nii")))
