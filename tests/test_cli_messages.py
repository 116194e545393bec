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
