"""The worker's ``job_committed`` hook: called once per committed result (the "finished" mail's)."""

from __future__ import annotations

import io
from pathlib import Path

from service_seed import seed
from table_challenge import TEST, make_table_challenge

from proctor.executor.run import run_next
from proctor.executor.runtime import WorkerRuntime
from proctor.sandbox.base import Sandbox
from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import authenticate
from proctor.settings import Settings
from proctor.store.models import Job

CSV = ("id,target\n" + "".join(f"{k},{v}\n" for k, v in TEST.items())).encode()


def test_the_hook_hears_each_committed_job_once(
    tmp_path: Path, sandbox: Sandbox, sandbox_settings: Settings
) -> None:
    seeded = seed(tmp_path / "service")
    platform = seeded.platform
    olga = authenticate(platform, seeded.tokens["olga"])
    installs.install(platform, olga, str(make_table_challenge(tmp_path / "tabular")))
    alice = authenticate(platform, seeded.tokens["alice"])
    receipt = submissions.submit(
        platform, alice, "tabular", None, io.BytesIO(CSV), "submission.csv"
    )
    heard: list[int] = []
    runtime = WorkerRuntime(
        db=platform.db,
        artifacts=platform.artifacts,
        settings=sandbox_settings,
        service=platform.settings,
        sandbox=sandbox,
        environments=lambda challenge, phase: {},
        job_committed=heard.append,
    )
    while run_next("hook-test", runtime):
        pass
    with platform.db() as session:
        ids = [job.id for job in session.query(Job).filter_by(submission_id=receipt.submission)]
    assert heard == ids
    platform.close()
