"""The CLI's one table from exception type to exit status, applied by one handler."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from proctor import errors
from proctor.cli.exit_status import EXIT_STATUSES, ProctorGroup, exit_status_of
from proctor.cli.main import build_app
from proctor.errors import (
    ArchiveError,
    ConfigError,
    EntryError,
    InputFileError,
    ManifestError,
    PlatformError,
    ProctorError,
    SandboxUnavailableError,
    UsageError,
)
from proctor.formats.brat import ExtractionFormatError
from proctor.formats.vec import VecFormatError
from proctor.formats.volumes import VolumeReadError
from proctor.metrics._validation import MetricInputError
from proctor.metrics.segmentation_compat import SingularCovarianceError


def app_raising(error: BaseException) -> typer.Typer:
    app = typer.Typer(cls=ProctorGroup, add_completion=False)

    @app.command()
    def fails() -> None:
        raise error

    @app.command()
    def other() -> None:
        """A second command, so that ``fails`` is a subcommand as in ``proctor``."""

    return app


def invoke(app: typer.Typer, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (UsageError("bad request"), 2),
        (ConfigError("unknown key", path="c.yaml", location="phases[0]"), 2),
        (InputFileError("x.csv: not a number"), 2),
        (SandboxUnavailableError("no user namespaces"), 2),
        (EntryError("entry failed"), 1),
        (ArchiveError("zip-slip"), 1),
        (ManifestError("next.sh missing"), 1),
        (PlatformError("every slot busy"), 3),
        (MetricInputError("y_true must be 1-D"), 2),
        (VolumeReadError("t.nii: no such file"), 2),
        (VecFormatError(Path("r.vec"), 3, "the value is NaN"), 2),
        (ExtractionFormatError(Path("a.txt"), 1, "bad"), 2),
    ],
)
def test_an_expected_error_prints_one_line_and_exits_with_its_status(
    error: BaseException, status: int
) -> None:
    code, out, err = invoke(app_raising(error), "fails")
    assert (code, out, err) == (status, "", f"error: {error}\n")


def test_the_nearest_type_along_the_mro_wins() -> None:
    assert exit_status_of(SandboxUnavailableError("x")) == 2  # not PlatformError's 3
    assert exit_status_of(SingularCovarianceError("x")) == 2  # a MetricInputError
    assert exit_status_of(ValueError("x")) is None
    assert exit_status_of(KeyboardInterrupt()) == 130


def test_ctrl_c_exits_130_saying_interrupted() -> None:
    assert invoke(app_raising(KeyboardInterrupt()), "fails") == (130, "", "interrupted\n")


def test_any_other_exception_is_a_bug_shown_with_its_traceback_exit_3() -> None:
    code, out, err = invoke(app_raising(ZeroDivisionError("oops")), "fails")
    assert code == 3
    assert out == ""
    assert "Traceback (most recent call last)" in err
    assert "ZeroDivisionError: oops" in err
    assert err.endswith("internal error: this is a bug in Proctor, please report it\n")


def test_typer_control_flow_passes_through() -> None:
    assert invoke(app_raising(typer.Exit(7)), "fails")[0] == 7
    code, _, err = invoke(app_raising(typer.Exit(0)), "nosuch")
    assert code == 2
    assert "No such command" in err
    assert invoke(app_raising(typer.Exit(0)), "fails", "--help")[0] == 0


def test_the_error_tree_carries_no_exit_codes() -> None:
    tree = [
        c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, ProctorError)
    ]
    assert len(tree) >= 9
    assert all(exit_status_of(kind("x")) is not None for kind in tree if kind is not ProctorError)
    assert not [c.__name__ for c in tree if hasattr(c, "exit_code")]


def test_every_type_in_the_table_is_an_exception() -> None:
    assert all(issubclass(kind, BaseException) for kind in EXIT_STATUSES)


def test_the_proctor_app_runs_its_commands_under_the_handler(tmp_path: Path) -> None:
    code, _, err = invoke(build_app(), "kit", str(tmp_path / "no-such"), str(tmp_path / "kit"))
    assert code == 2
    assert err.startswith("error: no challenge folder or bundled challenge called")


MAIN = "from proctor.cli.main import main; main()"


def test_a_reader_that_goes_away_is_no_bug_of_proctors() -> None:
    """``proctor challenges --json | head -c 1``: the pipe closes mid-output; exit 1, no trace."""
    reading, writing = os.pipe()
    os.close(reading)
    try:
        done = subprocess.run(
            [sys.executable, "-c", MAIN, "challenges", "--json"],
            stdout=writing, stderr=subprocess.PIPE, check=False, timeout=60,
        )  # fmt: skip
    finally:
        os.close(writing)
    assert done.returncode == 1
    assert b"internal error" not in done.stderr and b"Traceback" not in done.stderr
