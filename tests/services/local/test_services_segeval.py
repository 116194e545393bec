"""``services.local.segeval``: the tool's options and images checked at the service boundary."""

from __future__ import annotations

from pathlib import Path

import nibabel as nib
import numpy as np
import pytest

from proctor.errors import InputFileError, UsageError
from proctor.services.local.segeval import (
    SegevalRequest,
    SegevalRun,
    SingularCovarianceError,
    segeval_codes,
    start_segeval,
)


def write(path: Path, data: np.ndarray) -> str:
    nib.save(nib.Nifti1Image(data, np.eye(4)), str(path))
    return str(path)


def test_a_use_string_selects_codes_with_their_parameters_in_tool_order() -> None:
    assert segeval_codes("HDRFDST@0.95@,DICE") == {"DICE": None, "HDRFDST": 0.95}
    assert "MUTINF" not in segeval_codes("visceral")


@pytest.mark.parametrize(
    ("use", "message"),
    [("dice", "names no metric"), ("HDRFDST@high@", "'high' is not a number")],
)
def test_a_bad_use_string_is_a_usage_error(use: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as caught:
        segeval_codes(use)
    assert type(caught.value) is UsageError


def test_an_unreadable_image_is_an_input_file_error_naming_it(tmp_path: Path) -> None:
    truth = write(tmp_path / "truth.nii", np.ones((3, 3, 3), np.uint8))
    request = SegevalRequest(truth, str(tmp_path / "missing.nii"), segeval_codes("DICE"))
    with pytest.raises(InputFileError, match=r"missing\.nii"):
        start_segeval(request)


def test_a_singular_covariance_comes_through_as_the_tools_abort(tmp_path: Path) -> None:
    truth = np.zeros((5, 5, 5), np.uint8)
    segment = truth.copy()
    truth[2, 2, 2], segment[3, 2, 2] = 1, 1
    files = write(tmp_path / "a.nii", truth), write(tmp_path / "b.nii", segment)
    run = start_segeval(SegevalRequest(*files, segeval_codes("MAHLNBS")))
    assert isinstance(run, SegevalRun)
    with pytest.raises(SingularCovarianceError):
        for _section, values in run.sections():
            list(values)
