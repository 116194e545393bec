"""``proctor submit`` against a served platform (uvicorn on 127.0.0.1, the toy challenge).

An entry folder is accepted as ``proctor run`` accepts it: packed into a .tar.gz and streamed.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from service_seed import Seeded, seed, served
from sqlalchemy import select
from toy_challenge import make_entry
from typer.testing import CliRunner

from proctor.cli.main import build_app
from proctor.entries import unpack_entry
from proctor.store.models import SubmissionRow


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Seeded, str]]:
    seeded = seed(Path(tmp_path_factory.mktemp("submit")))
    with served(seeded.app) as url:
        yield seeded, url
    seeded.platform.close()


def submit(service: tuple[Seeded, str], user: str, *args: str) -> tuple[int, str]:
    seeded, url = service
    options = ["--server", url, "--token", seeded.tokens[user], "--no-wait", "--json"]
    result = CliRunner().invoke(build_app(), ["submit", *args, "-c", "toy", *options])
    return result.exit_code, result.stdout


def snapshot(root: Path) -> dict[str, tuple[bytes, bool]]:
    return {
        str(path.relative_to(root)): (path.read_bytes(), bool(path.stat().st_mode & stat.S_IXUSR))
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_an_entry_folder_is_packed_streamed_and_stored_as_proctor_run_reads_it(
    service: tuple[Seeded, str], tmp_path: Path
) -> None:
    entry = make_entry(tmp_path / "my entry")
    code, out = submit(service, "alice", str(entry))
    assert code == 0, out
    submission = json.loads(out)["submission"]
    seeded, _ = service
    with seeded.platform.db() as session:
        row = session.scalars(select(SubmissionRow).where(SubmissionRow.id == submission)).one()
        digest = row.upload_sha256
    stored = seeded.platform.artifacts.copy_to(digest, tmp_path / "stored.bin")
    unpacked = unpack_entry(stored, tmp_path / "unpacked")
    assert snapshot(unpacked) == snapshot(entry)  # the same files, exec bits kept


def test_a_missing_entry_is_a_usage_error_not_an_internal_one(
    service: tuple[Seeded, str], tmp_path: Path
) -> None:
    code, out = submit(service, "alice", str(tmp_path / "nowhere"))
    assert code != 0
    error = json.loads(out)["error"]
    assert error["kind"] == "usage" and "does not exist" in error["message"]
