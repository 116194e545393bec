"""Hardening item 16: mistakes get messages and exit 2, never tracebacks."""

from __future__ import annotations

import os
from pathlib import Path

import nibabel as nib
import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from proctor.cli.main import build_app


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    return build_app()


@pytest.fixture
def volumes(tmp_path: Path) -> tuple[str, str]:
    data = np.zeros((5, 5, 5), np.uint8)
    data[1:3, 1:3, 1:3] = 1
    for name in ("t", "s"):
        nib.save(nib.Nifti1Image(data, np.eye(4)), str(tmp_path / f"{name}.nii.gz"))
    return str(tmp_path / "t.nii.gz"), str(tmp_path / "s.nii.gz")


@pytest.mark.parametrize(
    ("where", "message"),
    [("folder", "is a folder: name the XML file"), ("missing", "does not exist: create it")],
)
def test_segeval_xml_into_a_folder_or_nowhere_is_a_message(
    app: typer.Typer, volumes: tuple[str, str], tmp_path: Path, where: str, message: str
) -> None:
    target = str(tmp_path) if where == "folder" else str(tmp_path / "no" / "out.xml")
    result = CliRunner().invoke(app, ["segeval", *volumes, "-xml", target])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_kit_into_a_file_is_a_message(app: typer.Typer, tmp_path: Path) -> None:
    target = tmp_path / "afile"
    target.write_text("x")
    result = CliRunner().invoke(app, ["kit", "physionet2018", str(target)])
    assert result.exit_code == 2
    assert "is a file" in result.stderr and "Traceback" not in result.output


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_kit_into_an_unwritable_folder_is_a_message(app: typer.Typer, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    result = CliRunner().invoke(app, ["kit", "physionet2018", str(locked / "kit")])
    assert result.exit_code == 2
    assert "cannot write" in result.stderr


def test_segeval_strict_refuses_different_spacing_and_stops_with_1(
    app: typer.Typer, tmp_path: Path
) -> None:
    data = np.zeros((5, 5, 5), np.uint8)
    data[1:3, 1:3, 1:3] = 1
    nib.save(nib.Nifti1Image(data, np.eye(4)), str(tmp_path / "t.nii.gz"))
    nib.save(nib.Nifti1Image(data, np.diag([2.0, 1.0, 1.0, 1.0])), str(tmp_path / "s.nii.gz"))
    files = [str(tmp_path / "t.nii.gz"), str(tmp_path / "s.nii.gz")]
    assert CliRunner().invoke(app, ["segeval", *files]).exit_code == 0  # the tool's behaviour
    strict = CliRunner().invoke(app, ["segeval", *files, "-strict"])
    assert strict.exit_code == 1
    assert "different spacing" in strict.output


def test_segeval_strict_makes_the_tools_stops_failures(app: typer.Typer, tmp_path: Path) -> None:
    nib.save(nib.Nifti1Image(np.ones((5, 5, 5), np.uint8), np.eye(4)), str(tmp_path / "t.nii.gz"))
    nib.save(nib.Nifti1Image(np.zeros((5, 5, 5), np.uint8), np.eye(4)), str(tmp_path / "e.nii.gz"))
    files = [str(tmp_path / "t.nii.gz"), str(tmp_path / "e.nii.gz")]
    assert CliRunner().invoke(app, ["segeval", *files]).exit_code == 0
    result = CliRunner().invoke(app, ["segeval", *files, "-strict"])
    assert result.exit_code == 1 and "image is empty!" in result.output


def write_2017(tmp_path: Path, answers: str) -> tuple[str, str]:
    (tmp_path / "REFERENCE.csv").write_text("A1,N\nA2,A\nA3,O\n")
    (tmp_path / "answers.txt").write_text(answers)
    return str(tmp_path / "answers.txt"), str(tmp_path / "REFERENCE.csv")


def test_score_2017_strict_lists_missing_records(app: typer.Typer, tmp_path: Path) -> None:
    files = write_2017(tmp_path, "A1,N\n")
    assert CliRunner().invoke(app, ["score", "physionet2017", *files]).exit_code == 0
    strict = CliRunner().invoke(app, ["score", "physionet2017", *files, "--strict"])
    assert strict.exit_code == 1
    assert "2 records have no answer: A2, A3" in strict.stderr


def test_an_empty_answers_file_is_a_usage_error(app: typer.Typer, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["score", "physionet2017", *write_2017(tmp_path, "")])
    assert result.exit_code == 2 and "holds no answers" in result.stderr


def test_an_empty_submissions_folder_is_a_usage_error(app: typer.Typer, tmp_path: Path) -> None:
    (tmp_path / "subs").mkdir()
    (tmp_path / "gold").mkdir()
    result = CliRunner().invoke(app, ["score", "ehealthkd", str(tmp_path / "subs"),
                                      str(tmp_path / "gold")])  # fmt: skip
    assert result.exit_code == 2 and "no participant folders" in result.stderr
