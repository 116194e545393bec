"""Whose program failed under an ingestion program (issue 27): the stderr rule.

``spec.program_blame`` on tracebacks as Python prints them; the runs through the real sandbox
are in ``tests/pipeline/test_organizer_program_failed.py``.
"""

from __future__ import annotations

from pathlib import Path

from proctor.spec.program_blame import last_traceback, organizer_fault

ORGANIZER, PARTICIPANT = "/app/program", "/app/ingested_program"

OWN_IMPORT = """\
Traceback (most recent call last):
  File "/app/program/ingestion.py", line 5, in <module>
    import data_io
  File "/app/program/data_io.py", line 2, in <module>
    import pkg_resources
ModuleNotFoundError: No module named 'pkg_resources'
"""

MODEL_RAISES = """\
Traceback (most recent call last):
  File "/app/program/ingestion.py", line 9, in <module>
    ys = [predict(x) for x in xs]
  File "/app/ingested_program/model.py", line 2, in predict
    raise RuntimeError("no")
RuntimeError: no
"""

OWN_SYNTAX = """\
  File "/app/program/ingestion.py", line 3
    print "hello"
    ^^^^^^^^^^^^^
SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?
"""


def _fault(stderr: str, folder: Path) -> str | None:
    return organizer_fault(
        stderr, organizer=ORGANIZER, participants=(PARTICIPANT,), program_folder=folder
    )


def test_the_programs_own_import_is_the_organizers(tmp_path: Path) -> None:
    (tmp_path / "ingestion.py").write_text("import sys\nsys.path.append(sys.argv[3])\n")
    (tmp_path / "data_io.py").write_text("import os\nimport pkg_resources\n")
    reason = _fault(OWN_IMPORT, tmp_path)
    assert reason is not None
    assert "No module named 'pkg_resources'" in reason and "data_io.py:2" in reason


def test_a_frame_in_the_participants_code_is_the_entrys(tmp_path: Path) -> None:
    assert _fault(MODEL_RAISES, tmp_path) is None


def test_a_syntax_error_in_the_program_is_the_organizers(tmp_path: Path) -> None:
    found = last_traceback(OWN_SYNTAX)
    assert found is not None and found.frames[0].line == 3
    reason = _fault(OWN_SYNTAX, tmp_path)
    assert reason is not None and "ingestion.py:3" in reason


def test_a_missing_module_looked_for_on_a_changed_path_is_the_entrys(tmp_path: Path) -> None:
    (tmp_path / "ingestion.py").write_text("import sys\nsys.path.insert(0, sys.argv[3])\n")
    missing_model = """\
Traceback (most recent call last):
  File "/app/program/ingestion.py", line 6, in <module>
    from model import predict
ModuleNotFoundError: No module named 'model'
"""
    assert _fault(missing_model, tmp_path) is None


def test_a_library_frame_is_the_entrys_unless_an_import_failed(tmp_path: Path) -> None:
    library = """\
Traceback (most recent call last):
  File "/app/program/ingestion.py", line 6, in <module>
    np.loadtxt(path)
  File "/usr/lib/python3/dist-packages/numpy/lib/npyio.py", line 1, in loadtxt
ValueError: could not convert string to float: 'x'
"""
    assert _fault(library, tmp_path) is None
    broken = library.replace("ValueError: could not", "ImportError: cannot import name 'x'")
    assert _fault(broken, tmp_path) is not None


def test_no_traceback_is_no_evidence(tmp_path: Path) -> None:
    assert _fault("Killed\n", tmp_path) is None
    named = OWN_IMPORT.replace("No module named 'pkg_resources'", f"{PARTICIPANT}/x.bin")
    assert _fault(named, tmp_path) is None


def test_a_command_the_environment_lacks_is_the_organizers(tmp_path: Path) -> None:
    stderr = "bwrap: execvp python: No such file or directory\n"
    reason = organizer_fault(
        stderr, organizer=ORGANIZER, participants=(PARTICIPANT,), program_folder=tmp_path,
        command="python",
    )  # fmt: skip
    assert reason is not None and "'python' cannot start" in reason
    other = organizer_fault(
        stderr, organizer=ORGANIZER, participants=(PARTICIPANT,), program_folder=tmp_path,
        command="python3",
    )  # fmt: skip
    assert other is None


def test_an_import_before_the_path_changes_is_the_organizers(tmp_path: Path) -> None:
    (tmp_path / "ingestion.py").write_text(
        "import not_installed_module\nimport sys\nsys.path.insert(0, sys.argv[3])\n"
    )
    first = """\
Traceback (most recent call last):
  File "/app/program/ingestion.py", line 1, in <module>
    import not_installed_module
ModuleNotFoundError: No module named 'not_installed_module'
"""
    assert _fault(first, tmp_path) is not None
