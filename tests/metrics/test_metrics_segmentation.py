"""EvaluateSegmentation metrics: the spec's reference numbers, the tool's quirks, properties."""

from __future__ import annotations

import gzip
import itertools
import math
import warnings
from pathlib import Path

import nibabel as nib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.metrics import adjusted_rand_score, mutual_info_score

from proctor.formats.volumes import VolumeReadError, read_tool_volume
from proctor.metrics.segmentation import (
    METRICS,
    SegmentationInputError,
    UndefinedMetricWarning,
    evaluate_segmentation,
)
from proctor.metrics.segmentation_compat import (
    HUGE_DISTANCE,
    SingularCovarianceError,
    ToolEvaluation,
    selected_codes,
    slab_bounds,
    tool_bytes,
)
from proctor.metrics.segmentation_distance import SurfaceDistances

SPACING = (0.8, 0.8, 2.0)
VOXEL_REFERENCE = {
    "DICE": 0.690411, "JACRD": 0.527197, "AUC": 0.815777, "KAPPA": 0.675696,
    "RNDIND": 0.945082, "ADJRIND": 0.654777, "ICCORR": 0.690366, "VOLSMTY": 0.926027,
    "MUTINF": 0.121499, "HDRFDST": 10.344080, "AVGDIST": 0.402962, "bAVD": 0.373070,
    "MAHLNBS": 0.867622, "VARINFO": 0.291650, "GCOERR": 0.050128, "PROBDST": 0.001758,
    "SNSVTY": 0.642857, "SPCFTY": 0.988696, "PRCISON": 0.745562, "ACURCY": 0.971750,
    "TP": 126, "FP": 43, "TN": 3761, "FN": 70, "FMEASR@0.5@": 0.722477,
}  # fmt: skip
MM_REFERENCE = {
    "HDRFDST": 9.935794, "AVGDIST": 0.474117, "bAVD": 0.449526, "REFVOL": 0.250880,
    "SEGVOL": 0.216320,
}  # fmt: skip


def reference_pair() -> tuple[np.ndarray, np.ndarray]:
    """The spec's 20×20×10 case, indexed [x, y, z] with inclusive box bounds."""
    truth = np.zeros((20, 20, 10), np.uint8)
    truth[5:12, 5:12, 3:7] = 1
    segment = np.zeros((20, 20, 10), np.uint8)
    segment[6:14, 5:12, 3:6] = 1
    segment[18, 18, 9] = 1
    return truth, segment


def write_nifti(path: Path, data: np.ndarray, spacing: tuple[float, ...] = SPACING) -> Path:
    nib.save(nib.Nifti1Image(data, np.diag([*spacing, 1.0])), str(path))
    return path


@pytest.fixture
def reference_files(tmp_path: Path) -> tuple[Path, Path]:
    truth, segment = reference_pair()
    return write_nifti(tmp_path / "truth.nii.gz", truth), write_nifti(tmp_path / "seg.nii", segment)


def tool_values(truth: Path, segment: Path, **options: object) -> dict[str, float]:
    streaming = bool(options.pop("streaming", True))
    t = read_tool_volume(truth, streaming=streaming)
    s = read_tool_volume(segment, streaming=streaming)
    evaluation = ToolEvaluation(t.data, s.data, spacing=t.spacing, **options)  # type: ignore[arg-type]
    use = ",".join(VOXEL_REFERENCE) + ",REFVOL,SEGVOL"
    return {code: evaluation.value(code, param).value for code, param in selected_codes(use)}


def test_tool_path_reproduces_every_reference_number_in_voxels(
    reference_files: tuple[Path, Path],
) -> None:
    values = tool_values(*reference_files)
    values["FMEASR@0.5@"] = values["FMEASR"]
    for code, expected in VOXEL_REFERENCE.items():
        assert round(values[code], 6) == pytest.approx(expected, abs=1e-9), code


def test_tool_path_reproduces_the_reference_distances_and_volumes_in_mm(
    reference_files: tuple[Path, Path],
) -> None:
    values = tool_values(*reference_files, millimeter=True)
    for code, expected in MM_REFERENCE.items():
        assert round(values[code], 6) == pytest.approx(expected, abs=1e-9), code
    assert values["DICE"] == pytest.approx(VOXEL_REFERENCE["DICE"], abs=5e-7)


@pytest.mark.parametrize("spacing", [None, SPACING])
def test_library_entry_point_gives_the_reference_numbers(spacing: tuple[float, ...] | None) -> None:
    truth, segment = reference_pair()
    expected = VOXEL_REFERENCE if spacing is None else MM_REFERENCE
    values = evaluate_segmentation(truth, segment, spacing=spacing, codes=list(expected))
    for code, value in expected.items():
        assert round(values[code], 6) == pytest.approx(value, abs=1e-9), code


def test_library_gives_the_same_numbers_for_booleans_bytes_and_floats() -> None:
    truth, segment = reference_pair()
    by_kind = [
        evaluate_segmentation(t, s)
        for t, s in [(truth, segment), (truth > 0, segment > 0), (truth * 1.0, segment * 1.0)]
    ]
    for code in METRICS:
        assert by_kind[1][code] == pytest.approx(by_kind[0][code], rel=1e-12), code
        assert by_kind[2][code] == pytest.approx(by_kind[0][code], rel=1e-12), code


def test_streaming_rescales_each_slab_so_an_all_foreground_slice_vanishes(tmp_path: Path) -> None:
    truth, segment = reference_pair()
    truth[:, :, 0] = 1  # one z slice entirely foreground: its own streaming slab (10 slices)
    files = write_nifti(tmp_path / "t.nii.gz", truth), write_nifti(tmp_path / "s.nii.gz", segment)
    assert tool_values(*files)["REFVOL"] == 196
    assert tool_values(*files, streaming=False)["REFVOL"] == 596


def test_streaming_renormalises_fuzzy_values_per_slab() -> None:
    volume = np.zeros((4, 4, 10), np.float32)
    volume[1, 1, 2], volume[1, 1, 7], volume[2, 2, 7] = 0.5, 1.0, 0.5
    streamed, whole = tool_bytes(volume), tool_bytes(volume, streaming=False)
    assert streamed[1, 1, 2] == 255  # the slab's own maximum is 0.5
    assert whole[1, 1, 2] == 127
    assert streamed[2, 2, 7] == whole[2, 2, 7] == 127


def test_labels_become_bytes_and_a_constant_image_becomes_empty() -> None:
    labels = np.array([[[1], [2]], [[2], [1]]], np.int16)
    assert set(np.unique(tool_bytes(labels, streaming=False))) == {0, 255}
    assert not tool_bytes(np.full((3, 3, 3), 7.0)).any()


def test_slabs_run_along_the_last_axis_of_size_above_one() -> None:
    assert slab_bounds((20, 20, 10)) == (2, [(i, i + 1) for i in range(10)])
    axis, pieces = slab_bounds((512, 512, 300))
    assert axis == 2 and pieces[0] == (0, 30) and len(pieces) == 10
    assert slab_bounds((20, 20, 1))[0] == 1  # a single slice is split by rows
    assert slab_bounds((7, 23, 1))[1][-2:] == [(18, 21), (21, 23)]  # pieces of ⌈23/10⌉ = 3 rows


def test_threshold_is_strict_so_probability_one_half_is_background() -> None:
    truth = np.zeros((6, 6, 6), np.uint8)
    truth[1:4, 1:4, 1:4] = 255
    segment = truth.copy()
    segment[1, 1, 1] = tool_bytes(np.array([[[0.0, 0.5, 1.0]]]), streaming=False)[0, 0, 1]
    assert segment[1, 1, 1] == 127
    crisp = ToolEvaluation(truth, segment, spacing=(1, 1, 1), threshold=0.5)
    assert crisp.value("FN").value == 1
    assert crisp.counts().segment == 26
    fuzzy = ToolEvaluation(truth, segment, spacing=(1, 1, 1))
    assert fuzzy.value("FN").value == pytest.approx(128 / 255)


def test_tool_fixes_undefined_values_where_the_library_says_nan() -> None:
    truth = np.zeros((5, 5, 5), np.uint8)
    truth[1:4, 1:4, 1:4] = 255
    segment = np.zeros_like(truth)
    segment[0, 0, 0] = 100  # not empty for the tool, but empty at the 127.5 level
    tool = ToolEvaluation(truth, segment, spacing=(1, 1, 1))
    assert tool.value("HDRFDST").value == HUGE_DISTANCE
    with pytest.warns(UndefinedMetricWarning, match="HDRFDST"):
        assert math.isnan(
            evaluate_segmentation(truth / 255, segment / 255, codes=["HDRFDST"])["HDRFDST"]
        )
    apart = ToolEvaluation(truth, np.roll(truth, 3, axis=0) * 0, spacing=(1, 1, 1))
    assert apart.value("PRCISON").value == 0.0
    assert apart.value("PROBDST").value == -1.0


def test_both_empty_volumes_give_nan_with_a_warning() -> None:
    empty = np.zeros((3, 3, 3), bool)
    with pytest.warns(UndefinedMetricWarning):
        values = evaluate_segmentation(empty, empty, codes=["DICE", "JACRD", "AVGDIST"])
    assert all(math.isnan(v) for v in values.values())


def test_singular_mahalanobis_covariance_aborts_the_tool_path() -> None:
    truth = np.zeros((5, 5, 5), np.uint8)
    segment = truth.copy()
    truth[2, 2, 2], segment[3, 2, 2] = 255, 255
    with pytest.raises(SingularCovarianceError, match="singular"):
        ToolEvaluation(truth, segment, spacing=(1, 1, 1)).value("MAHLNBS")
    with pytest.warns(UndefinedMetricWarning, match="singular"):
        assert math.isnan(
            evaluate_segmentation(truth > 0, segment > 0, codes=["MAHLNBS"])["MAHLNBS"]
        )


def brute_force(a: np.ndarray, b: np.ndarray, spacing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Directed distances A∖B→B and B∖A→A by comparing every pair of voxels."""
    pa, pb = np.argwhere(a) * spacing, np.argwhere(b) * spacing
    pairwise = np.sqrt(((pa[:, None, :] - pb[None, :, :]) ** 2).sum(axis=2))
    only_a, only_b = ~b[tuple(np.argwhere(a).T)], ~a[tuple(np.argwhere(b).T)]
    return pairwise.min(axis=1)[only_a], pairwise.min(axis=0)[only_b]


masks = hnp.arrays(np.bool_, st.tuples(*[st.integers(1, 6)] * 3), elements=st.booleans())


@given(
    data=st.data(),
    spacing=st.tuples(*[st.sampled_from([0.5, 0.8, 1.0, 2.5])] * 3),
    quantile=st.floats(0, 0.99),
)
@settings(max_examples=60, deadline=None)
def test_distances_equal_a_brute_force_search_over_all_voxel_pairs(
    data: st.DataObject, spacing: tuple[float, float, float], quantile: float
) -> None:
    a = data.draw(masks)
    b = data.draw(hnp.arrays(np.bool_, a.shape, elements=st.booleans()))
    a.flat[0], b.flat[-1] = True, True
    forward, backward = brute_force(a, b, np.array(spacing))
    pooled = np.sort(np.concatenate([forward, backward]))
    codes = ["HDRFDST", "AVGDIST", "bAVD", f"HDRFDST@{quantile!r}@"]
    got = evaluate_segmentation(a, b, spacing=spacing, codes=codes)
    assert got["HDRFDST"] == pytest.approx(pooled.max() if pooled.size else 0.0)
    average = (forward.sum() / a.sum() + backward.sum() / b.sum()) / 2
    balanced = (forward.sum() + backward.sum()) / (2 * a.sum())
    nearest = SurfaceDistances(a, b, spacing)
    assert nearest.nearest_average_distance() == pytest.approx(average)
    assert nearest.nearest_balanced_average_distance() == pytest.approx(balanced)
    # the tool's bounded search (tests/metrics/test_metrics_segmentation_avgdist.py) never finds
    # nearer
    assert got["AVGDIST"] >= average - 1e-9 and got["bAVD"] >= balanced - 1e-9
    if pooled.size > 1:
        expected = pooled[int(quantile * (pooled.size - 1))]
        assert got[codes[-1]] == pytest.approx(expected)


SYMMETRIC = [
    *("DICE", "JACRD", "KAPPA", "RNDIND", "ADJRIND", "ICCORR", "VOLSMTY", "MUTINF", "HDRFDST"),
    *("HDRFDST@0.9@", "AVGDIST", "VARINFO", "GCOERR", "PROBDST", "ACURCY"),
]


@given(data=st.data(), fuzzy=st.booleans())
@settings(max_examples=40, deadline=None)
def test_symmetric_metrics_do_not_depend_on_which_volume_is_the_truth(
    data: st.DataObject, fuzzy: bool
) -> None:
    a = data.draw(masks)
    elements = st.sampled_from([0.0, 0.25, 0.6, 1.0]) if fuzzy else st.booleans()
    b = data.draw(hnp.arrays(np.float64 if fuzzy else np.bool_, a.shape, elements=elements))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        forward = evaluate_segmentation(a, b, codes=SYMMETRIC)
        backward = evaluate_segmentation(b, a, codes=SYMMETRIC)
    for code in SYMMETRIC:
        assert backward[code] == pytest.approx(forward[code], rel=1e-9, abs=1e-12, nan_ok=True)


@given(data=st.data())
@settings(max_examples=30, deadline=None)
def test_rand_and_mutual_information_agree_with_scikit_learn(data: st.DataObject) -> None:
    a = data.draw(masks)
    b = data.draw(hnp.arrays(np.bool_, a.shape, elements=st.booleans()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        values = evaluate_segmentation(a, b, codes=["ADJRIND", "MUTINF"])
    if not math.isnan(values["ADJRIND"]):
        assert values["ADJRIND"] == pytest.approx(
            adjusted_rand_score(a.ravel(), b.ravel()), abs=1e-9
        )
    assert values["MUTINF"] * math.log(2) == pytest.approx(
        mutual_info_score(a.ravel(), b.ravel()), abs=1e-9
    )


@pytest.mark.parametrize(
    ("truth", "segment", "message"),
    [
        (np.zeros((3, 3, 3)), np.zeros((3, 3, 2)), "same voxel grid"),
        (np.full((2, 2, 2), np.nan), np.zeros((2, 2, 2)), "NaN"),
        (np.full((2, 2, 2), 3.0), np.zeros((2, 2, 2)), r"\[0, 1\]"),
        (np.zeros((2, 2, 2, 2)), np.zeros((2, 2, 2, 2)), "2-D or 3-D"),
    ],
)
def test_bad_volumes_are_refused_with_a_clear_error(
    truth: np.ndarray, segment: np.ndarray, message: str
) -> None:
    with pytest.raises(SegmentationInputError, match=message):
        evaluate_segmentation(truth, segment)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"spacing": (1.0, 0.0, 1.0)}, "spacing"),
        ({"codes": ["NOPE"]}, "unknown metric code 'NOPE'"),
        ({"codes": ["HDRFDST@x@"]}, "not a number"),
        ({"threshold": 2.0}, "threshold"),
    ],
)
def test_bad_options_are_refused_naming_the_argument(
    options: dict[str, object], message: str
) -> None:
    volume = np.ones((2, 2, 2), bool)
    with pytest.raises(SegmentationInputError, match=message):
        evaluate_segmentation(volume, volume, **options)  # type: ignore[arg-type]


def test_unreadable_or_missing_nifti_is_an_error_naming_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.nii.gz"
    broken.write_bytes(gzip.compress(b"not a nifti header at all" * 20))
    with pytest.raises(VolumeReadError, match=r"broken\.nii\.gz"):
        read_tool_volume(broken)
    with pytest.raises(VolumeReadError, match=r"missing\.nii"):
        read_tool_volume(tmp_path / "missing.nii")


def test_non_finite_voxels_in_a_file_are_refused(tmp_path: Path) -> None:
    data = np.zeros((3, 3, 3), np.float32)
    data[1, 1, 1] = np.inf
    with pytest.raises(VolumeReadError, match=r"inf\.nii"):
        read_tool_volume(write_nifti(tmp_path / "inf.nii", data))


def test_registry_lists_every_code_with_direction_and_the_tools_description() -> None:
    assert len(METRICS) == 28
    assert list(itertools.islice(METRICS, 3)) == ["DICE", "JACRD", "AUC"]
    assert METRICS["HDRFDST"].direction == "lower"
    assert METRICS["DICE"].direction == "higher"
    assert METRICS["MAHLNBS"].name == "Mahanabolis Distance"  # the tool's spelling
    assert METRICS["FALLOUT"].similarity is False


def test_use_string_follows_the_tools_substring_rule() -> None:
    assert selected_codes("DICE,HDRFDST@0.95@,FMEASR@0.5@") == [
        ("DICE", None), ("HDRFDST", 0.95), ("FMEASR", 0.5),
    ]  # fmt: skip
    assert "DICE" not in dict(selected_codes("visceral"))
    with pytest.raises(SegmentationInputError, match="names no metric"):
        selected_codes("dice")
