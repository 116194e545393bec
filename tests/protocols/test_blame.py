"""Whether an ingestion program's run read the upload (issue 27): ``protocols.blame``."""

from __future__ import annotations

from pathlib import Path

from proctor.protocols.blame import UploadReads


def test_upload_reads_see_a_read_file_and_a_new_one(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text("x = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "weights.bin").write_bytes(b"0" * 10)
    reads = UploadReads(tmp_path)
    reads.start()
    assert not reads.read()
    (tmp_path / "sub" / "weights.bin").read_bytes()
    assert reads.read()
    reads.start()
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "model.cpython-311.pyc").write_bytes(b"")
    assert reads.read()
