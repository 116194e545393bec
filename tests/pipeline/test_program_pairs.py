"""Which folders two programs run at once share (``pipeline.program_pairs.both_writable``)."""

from __future__ import annotations

from pathlib import Path

from proctor.pipeline.program_pairs import both_writable
from proctor.spec.programs import ProgramRequest
from proctor.spec.scorer import ProgramLimits


def _request(folders: dict[str, Path], writable: tuple[str, ...]) -> ProgramRequest:
    return ProgramRequest(
        argv=("python3", "run.py"),
        cwd="/app/program",
        folders=tuple((source, target) for target, source in folders.items()),
        env={},
        limits=ProgramLimits(),
        wall_s=60.0,
        writable=writable,
    )


def test_the_upload_is_shared_but_never_a_working_folder_even_from_one_source(
    tmp_path: Path,
) -> None:
    """One folder as both programs' ``/app/program``: each still gets a copy of its own, so
    the participant's code beside the scoring program cannot plant a module it imports."""
    program, upload, references = (tmp_path / name for name in ("program", "upload", "ref"))
    for folder in (program, upload, references):
        folder.mkdir()
    places = ("/app/program", "/app/input/res")
    scoring = _request(
        {"/app/program": program, "/app/input/res": upload, "/app/input/ref": references},
        (*places, "/app/input/ref"),
    )
    ingestion = _request({"/app/program": program, "/app/input/res": upload}, places)
    assert both_writable(scoring, ingestion) == [(upload, "/app/input/res")]
