"""A job whose worker fails after losing its lease stops quietly and stores nothing.

A worker frozen in the middle of a transaction past its lease (a paused VM) finds, once it
runs again, its database session ended (``idle_in_transaction_session_timeout``) and the job
run by another worker. The error that brings is no fault to report: the lease is lost, the
evaluation stops, nothing is stored. While the lease is still held, the same error is raised.
"""

from __future__ import annotations

import logging
import tarfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from service_seed import Seeded, seed, submit
from sqlalchemy.exc import OperationalError
from toy_challenge import make_entry

from proctor.executor import run
from proctor.executor.run import execute
from proctor.executor.runtime import WorkerRuntime
from proctor.pipeline import entry_image
from proctor.pipeline.task import JobEnvironment
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings
from proctor.spec import Challenge, Phase
from proctor.store import jobs
from proctor.store.runfolder import ENTRY_IMAGE_FILES, ENTRY_IMAGE_FOLDER, RunFolder

ENDED = OperationalError("COMMIT", {}, Exception("terminating connection: idle in transaction"))


def _no_environment(challenge: Challenge, phase: Phase) -> Mapping[str, JobEnvironment]:
    return {}


@pytest.fixture
def seeded(shared_dir: Path) -> Iterator[tuple[Seeded, str]]:
    service = seed(shared_dir / "service")
    try:
        yield service, submit(service, "alice", make_entry(shared_dir / "entry"))
    finally:
        service.platform.close()


@pytest.mark.sandbox
@pytest.mark.parametrize("lost", [True, False], ids=["lease-lost", "lease-held"])
def test_a_database_error_after_the_lease_is_lost_stops_the_job_quietly(
    seeded: tuple[Seeded, str],
    sandbox: BwrapSandbox,
    sandbox_settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    lost: bool,
) -> None:
    service, sid = seeded
    platform = service.platform
    runtime = WorkerRuntime(platform.db, platform.artifacts, sandbox_settings,
                            platform.settings, sandbox, _no_environment)  # fmt: skip
    lease = jobs.claim(platform.db, "w", 300.0)
    assert lease is not None

    def ended_session(*_: object) -> bool:
        if lost:
            jobs.cancel_jobs(platform.db, sid)  # another worker's turn now
        raise ENDED

    monkeypatch.setattr(run.jobs, "count_case", ended_session)
    stored = set(platform.artifacts.root.rglob("*"))
    if not lost:
        with pytest.raises(OperationalError):
            execute(lease, runtime)
        return
    with caplog.at_level(logging.WARNING, logger="proctor.executor.run"):
        execute(lease, runtime)
    assert f"job {lease.job_id} attempt 1: lease lost" in caplog.text
    assert set(platform.artifacts.root.rglob("*")) == stored


def test_the_run_artifact_keeps_the_entry_images_files_not_its_archive(tmp_path: Path) -> None:
    folder = RunFolder.create(tmp_path, "job-1-a1")
    try:
        for name in (*ENTRY_IMAGE_FILES, f"{ENTRY_IMAGE_FOLDER}/image.tar", "entry/secret.txt"):
            (folder.root / name).parent.mkdir(parents=True, exist_ok=True)
            (folder.root / name).write_text(name)
        with tarfile.open(fileobj=run._run_logs(folder, "t"), mode="r:gz") as tar:
            kept = {m.name: tar.extractfile(m).read().decode() for m in tar}  # type: ignore[union-attr]
    finally:
        folder.discard()
    assert kept == {name: name for name in ENTRY_IMAGE_FILES}
    assert ENTRY_IMAGE_FILES == (
        "entry-image.json",
        "entry-image/Dockerfile",
        "entry-image/build.log",
    )
    assert (ENTRY_IMAGE_FILES[0], ENTRY_IMAGE_FOLDER) == (entry_image.RECORD, entry_image.TAKEN)
