"""``proctor segeval``: the tool's printed lines, XML file, messages and exit statuses."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import nibabel as nib
import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from proctor.cli.main import build_app
from proctor.metrics.segmentation import METRICS

SPACING = (0.8, 0.8, 2.0)


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    return build_app()


def write(path: Path, data: np.ndarray) -> str:
    nib.save(nib.Nifti1Image(data, np.diag([*SPACING, 1.0])), str(path))
    return str(path)


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    truth = np.zeros((20, 20, 10), np.uint8)
    truth[5:12, 5:12, 3:7] = 1
    segment = np.zeros_like(truth)
    segment[6:14, 5:12, 3:6] = 1
    segment[18, 18, 9] = 1
    return write(tmp_path / "truth.nii.gz", truth), write(tmp_path / "seg.nii.gz", segment)


def segeval(app: typer.Typer, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["segeval", *args])
    return result.exit_code, result.stdout, result.stderr


def test_default_run_prints_every_code_in_the_tools_format(
    app: typer.Typer, files: tuple[str, str]
) -> None:
    status, out, _ = segeval(app, *files)
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "Similarity:"
    assert lines[1] == "DICE\t= 0.690411\tDice Coefficient (F1-Measure) "
    assert "HDRFDST\t= 10.344080\tHausdorff Distance (in voxel)" in lines
    assert "TP\t= 126\ttrue positive (in voxel)" in lines
    assert "REFVOL\t= 196\treference volume (in voxel)" in lines
    assert lines[10:12] == ["", "Distance:"]
    printed = [line.split("\t")[0] for line in lines if "\t= " in line]
    assert printed == list(METRICS)
    assert re.search(r"^Total execution time= \d+ milliseconds$", out, re.MULTILINE)


def test_xml_holds_images_metrics_time_and_dimensions(
    app: typer.Typer, files: tuple[str, str], tmp_path: Path
) -> None:
    target = tmp_path / "out.xml"
    status, _, _ = segeval(app, *files, "-use", "DICE,HDRFDST,SEGVOL", "-unit", "millimeter",
                           "-xml", str(target))  # fmt: skip
    assert status == 0
    root = ET.parse(target).getroot()
    assert root.tag == "measurement"
    assert [child.tag for child in root] == [
        "fixed-image", "moving-image", "metrics", "time", "dimention",
    ]  # fmt: skip
    fixed = root.find("fixed-image")
    assert fixed is not None
    assert fixed.attrib == {"filename": files[0], "nonzeropoints": "70", "intersection": "126"}
    metrics = root.find("metrics")
    assert metrics is not None
    assert [m.tag for m in metrics] == ["DICE", "HDRFDST", "SEGVOL"]
    hd = metrics.find("HDRFDST")
    assert hd is not None
    assert list(hd.attrib) == ["name", "symbol", "type", "value", "executiontime", "unit"]
    assert (hd.get("value"), hd.get("type"), hd.get("unit")) == (
        "9.935794",
        "distance",
        "millimeter",
    )
    volume = metrics.find("SEGVOL")
    assert volume is not None
    assert (volume.get("value"), volume.get("unit")) == ("0.216320", "milliliter")
    size = root.find("dimention")
    assert size is not None
    assert size.attrib == {
        "max_x": "19", "max_y": "19", "max_z": "9", "voxelspacing_x": "0.800000",
        "voxelspacing_y": "0.800000", "voxelspacing_z": "2.000000",
    }  # fmt: skip


def test_threshold_prints_the_crisp_line_first(app: typer.Typer, files: tuple[str, str]) -> None:
    status, out, _ = segeval(app, *files, "-thd", "0.5", "-use", "FMEASR@0.5@")
    assert status == 0
    assert out.splitlines()[:3] == ["Crisp segmentation at threshold= 0.5", "", "Similarity:"]
    assert "FMEASR\t= 0.722477\tF-Measure " in out.splitlines()


def test_different_sizes_print_the_message_write_it_to_xml_and_exit_0(
    app: typer.Typer, files: tuple[str, str], tmp_path: Path
) -> None:
    small = write(tmp_path / "small.nii.gz", np.ones((4, 4, 4), np.uint8))
    target = tmp_path / "msg.xml"
    status, out, _ = segeval(app, files[0], small, "-xml", str(target))
    assert status == 0
    assert out == "Images are from different Sizes: fixedImage=4000 movingImage=64\n"
    root = ET.parse(target).getroot()
    assert [child.tag for child in root] == ["fixed-image", "moving-image", "message"]
    message = root.find("message")
    assert message is not None and message.text is not None
    assert message.text.strip() == out.strip()


@pytest.mark.parametrize(
    ("which", "message"), [(0, "Fixed image is empty!"), (1, "Moving image is empty!")]
)
def test_an_empty_image_prints_the_tools_message(
    app: typer.Typer, files: tuple[str, str], tmp_path: Path, which: int, message: str
) -> None:
    args = list(files)
    args[which] = write(tmp_path / "empty.nii.gz", np.full((20, 20, 10), 3, np.uint8))
    status, out, _ = segeval(app, *args)
    assert (status, out) == (0, message + "\n")


def test_singular_mahalanobis_exits_255_without_xml(app: typer.Typer, tmp_path: Path) -> None:
    truth = np.zeros((5, 5, 5), np.uint8)
    segment = truth.copy()
    truth[2, 2, 2], segment[3, 2, 2] = 1, 1
    target = tmp_path / "none.xml"
    args = (write(tmp_path / "a.nii", truth), write(tmp_path / "b.nii", segment))
    status, out, err = segeval(app, *args, "-use", "DICE,MAHLNBS", "-xml", str(target))
    assert status == 255
    assert "DICE\t= 0.000000" in out
    assert "singular" in err
    assert not target.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-bogus"], "unknown option '-bogus'"),
        (["-thd", "half"], "-thd must be a number"),
        (["-unit", "inch"], "-unit must be"),
        (["-use", "dice"], "names no metric"),
        (["-xml"], "-xml needs a value"),
    ],
)
def test_usage_mistakes_exit_2_with_a_clear_message(
    app: typer.Typer, files: tuple[str, str], args: list[str], message: str
) -> None:
    status, _, err = segeval(app, *files, *args)
    assert status == 2
    assert message in err


def test_an_unreadable_image_exits_2_naming_the_file(
    app: typer.Typer, files: tuple[str, str], tmp_path: Path
) -> None:
    broken = tmp_path / "broken.nii"
    broken.write_bytes(b"\x00" * 100)
    status, _, err = segeval(app, files[0], str(broken))
    assert status == 2
    assert "broken.nii" in err
