"""A worker that does not allow ``environment: host`` refuses such a job installed after it started.

The toy challenge runs on the host's tree; a server that allowed it installed it. A worker
opened on the same data without the permission fails the job as the platform's (stored once,
never retried), with the message saying how to allow it, and runs nothing.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from service_seed import seed, submit
from toy_challenge import make_entry

from proctor.executor.run import run_next
from proctor.services.platform.accounts import authenticate
from proctor.services.platform.resources import open_platform
from proctor.services.platform.submissions import status
from proctor.services.platform.worker import worker_runtime


def test_a_job_on_the_hosts_tree_fails_on_a_worker_that_does_not_allow_it(
    tmp_path: Path,
) -> None:
    seeded = seed(tmp_path)  # its server allows the host's tree
    sid = submit(seeded, "alice", make_entry(tmp_path / "entry"))
    strict = dataclasses.replace(seeded.platform.settings, allow_host_environment=False)
    worker = open_platform(strict, seeded.platform.host)
    try:
        assert run_next("strict-worker", worker_runtime(worker))
        assert not run_next("strict-worker", worker_runtime(worker))  # not retried
    finally:
        worker.close()
    shown = status(seeded.platform, authenticate(seeded.platform, seeded.tokens["olga"]), sid)
    seeded.platform.close()
    assert shown.status == "failed" and shown.failure == "platform", shown
    assert shown.report is not None
    message = shown.report["message"] + " ".join(s["message"] for s in shown.report["stages"])
    assert "--allow-host-environment" in message, shown.report
