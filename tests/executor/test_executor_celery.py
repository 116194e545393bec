"""The ``celery`` executor with real parts: Redis, `proctor worker` processes, the bwrap sandbox,
SQLite and PostgreSQL; lease, heartbeat and reaper intervals of at most 2 s.

- a worker SIGKILLed in the middle of a job: another worker runs it, one result is stored;
- a stale worker (frozen past its lease) is resumed after another worker stored the result: its
  late writes are refused and the stored result stays the other worker's;
- an entry that kills its worker every time ends ``failed: infrastructure`` after 3 attempts,
  flagged, its quota refunded;
- ``proctor serve --executor celery`` SIGKILLed mid-queue and restarted loses nothing;
- a team with nothing running is served before another team's earlier jobs (fair queue);
- RabbitMQ works as the broker too, and a message delivered again finds its job done and does
  nothing; a worker refuses challenges on the host's /usr unless allowed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from celery_cluster import (
    PROCTOR,
    RABBITMQ,
    Cluster,
    lease_pid,
    rabbitmq_unreachable,
    redis_unreachable,
    wait_for,
)
from toy_challenge import make_challenge, make_exam_entry

from proctor.errors import RefusedError
from proctor.executor.celery_app import make_app, sender
from proctor.services.platform.accounts import add_user
from proctor.services.platform.celery_worker import default_concurrency
from proctor.services.platform.client import Client
from proctor.services.platform.submissions import status
from proctor.types import JobState

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
GiB = 1024**3


@pytest.fixture
def cluster(database_url: str, shared_dir: Path) -> Iterator[Cluster]:
    unreachable = redis_unreachable()
    if unreachable:
        pytest.skip(unreachable)
    deployment = Cluster(shared_dir, database_url)
    try:
        yield deployment
    finally:
        deployment.close()


def _toy(cluster: Cluster, quota: dict[str, int] | None = None, tasks: int = 1) -> None:
    """Install the toy records challenge (on the host's /usr: allowed in these tests).

    With ``tasks`` > 1 its phase has that many copies of the task (one job each).
    """
    folder = make_challenge(cluster.root / "bundles" / "toy")
    spec = yaml.safe_load((folder / "challenge.yaml").read_text())
    if quota:
        spec["phases"][0]["quota"] = quota
    task = spec["tasks"][0]
    spec["tasks"] += [task | {"name": f"{task['name']}{n}"} for n in range(2, tasks + 1)]
    spec["phases"][0]["tasks"] = [t["name"] for t in spec["tasks"]]
    (folder / "challenge.yaml").write_text(yaml.safe_dump(spec))
    cluster.install(folder)


def _sleepy_entry(cluster: Cluster, name: str, seconds: float) -> Path:
    """An entry whose first hidden case sleeps ``seconds`` before its good answer."""
    return make_exam_entry(
        cluster.root / "entries" / name, f'  te01) sleep {seconds}; exec ./good.sh "$1" ;;'
    )


def _running_exam(cluster: Cluster, sid: str) -> int:
    """Wait until the submission's job is in its exam; the pid of the pool process on it."""
    job = wait_for(
        lambda: next(
            (j for j in cluster.jobs_of(sid) if j.state == JobState.RUNNING and j.stage == "exam"),
            None,
        ),
        60,
        "the job's exam to start",
    )
    return lease_pid(job)


def _done(cluster: Cluster, sid: str, timeout: float = 90) -> None:
    try:
        wait_for(
            lambda: all(j.state in (JobState.DONE, JobState.FAILED) for j in cluster.jobs_of(sid)),
            timeout,
            f"submission {sid} to finish",
        )
    except AssertionError as err:
        raise AssertionError(f"{err}\n{cluster.diagnosis(sid)}") from None


def test_default_concurrency_is_cores_or_what_memory_holds_at_least_one() -> None:
    assert default_concurrency([2 * GiB, 4 * GiB], cores=8, host_memory=16 * GiB) == 4
    assert default_concurrency([GiB], cores=2, host_memory=64 * GiB) == 2
    assert default_concurrency([32 * GiB], cores=8, host_memory=16 * GiB) == 1
    assert default_concurrency([], cores=3, host_memory=GiB) == 3


def test_a_worker_refuses_a_challenge_on_the_host_unless_allowed(cluster: Cluster) -> None:
    _toy(cluster)
    env = cluster.env
    env.pop("PROCTOR_ALLOW_HOST_ENVIRONMENT")
    refused = subprocess.run([PROCTOR, "worker", "--json"], env=env, capture_output=True,
                             text=True, timeout=60, check=False)  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    message = json.loads(refused.stdout)["error"]["message"]
    assert "'toy'" in message and "environment: host" in message
    assert "--allow-host-environment" in message


def test_rabbitmq_brokers_too_and_a_duplicate_message_does_nothing(
    shared_dir: Path, tmp_path: Path
) -> None:
    unreachable = rabbitmq_unreachable()
    if unreachable:
        pytest.skip(unreachable)
    cluster = Cluster(shared_dir, f"sqlite:///{tmp_path / 'proctor.sqlite3'}", broker=RABBITMQ)
    try:
        _toy(cluster)
        worker = cluster.start_worker()
        sid = cluster.submit(cluster.user("bob", team="blue"), _sleepy_entry(cluster, "e", 0))
        _done(cluster, sid.submission)
        (job,) = cluster.jobs_of(sid.submission)
        assert [r.status for r in cluster.results_of(job.id)] == ["scored"]
        sender(make_app(RABBITMQ, cluster.queue), lambda _: cluster.queue)(job.id)  # again
        worker.wait_log("succeeded", 30)
        wait_for(lambda: worker.log().count("succeeded") == 2, 30, "the duplicate's delivery")
        assert re.search(r"succeeded in [0-9.]+s: False", worker.log())  # it found the job done
        assert [r.status for r in cluster.results_of(job.id)] == ["scored"]
        assert [a.attempt for a in cluster.attempts_of(job.id)] == [1]
    finally:
        cluster.close()


def test_the_tasks_of_one_submission_run_at_once_on_separate_workers(cluster: Cluster) -> None:
    _toy(cluster, tasks=2)
    workers = [cluster.start_worker(), cluster.start_worker()]
    sid = cluster.submit(cluster.user("bob", team="blue"), _sleepy_entry(cluster, "e", 2))
    _done(cluster, sid.submission)
    jobs = cluster.jobs_of(sid.submission)
    assert [j.state for j in jobs] == [JobState.DONE, JobState.DONE]
    (first,), (second,) = (cluster.attempts_of(job.id) for job in jobs)
    groups = {os.getpgid(lease_pid_of(a.worker)) for a in (first, second)}
    assert groups == {w.pid for w in workers}  # one job each: a worker reserves one message
    assert first.started < second.ended and second.started < first.ended  # at the same time
    assert all(r.status == "scored" for job in jobs for r in cluster.results_of(job.id))


def lease_pid_of(worker: str) -> int:
    """The pid in a lease owner ``HOST:PID:celery``."""
    return int(worker.split(":")[1])


def test_a_routed_challenge_runs_only_on_the_workers_taking_its_queue(cluster: Cluster) -> None:
    big = f"{cluster.queue}-big"
    cluster.extra_env["PROCTOR_QUEUE_ROUTES"] = f"toy:{big}"
    _toy(cluster)
    cluster.start_worker()  # the default queue: idle, and never offered the toy's jobs
    sid = cluster.submit(cluster.user("bob", team="blue"), _sleepy_entry(cluster, "e", 0))
    routed = cluster.spawn(["worker", "--concurrency", "1", "--queues", big, "--json"])
    assert routed.announced["queues"] == [big]
    _done(cluster, sid.submission)
    (job,) = cluster.jobs_of(sid.submission)
    (attempt,) = cluster.attempts_of(job.id)
    assert os.getpgid(lease_pid_of(attempt.worker)) == routed.pid
    assert [r.status for r in cluster.results_of(job.id)] == ["scored"]


def test_a_worker_killed_mid_job_another_runs_it_and_one_result_is_stored(
    cluster: Cluster,
) -> None:
    _toy(cluster)
    first = cluster.start_worker()
    team = cluster.user("bob", team="blue")
    sid = cluster.submit(team, _sleepy_entry(cluster, "sleepy", 2)).submission
    pid = _running_exam(cluster, sid)
    assert os.getpgid(pid) == first.pid
    first.kill()
    second = cluster.start_worker()
    _done(cluster, sid)
    (job,) = cluster.jobs_of(sid)
    assert (job.state, job.failure, job.result_attempt) == (JobState.DONE, None, 2)
    (result,) = cluster.results_of(job.id)
    assert (result.attempt, result.status) == (2, "scored")
    attempts = cluster.attempts_of(job.id)
    assert [(a.attempt, a.outcome) for a in attempts] == [(1, "lost"), (2, "scored")]
    assert attempts[0].worker.split(":")[1] == str(pid)
    assert attempts[1].worker != attempts[0].worker
    assert os.getpgid(int(attempts[1].worker.split(":")[1])) == second.pid


def test_a_stale_workers_late_writes_are_refused(cluster: Cluster) -> None:
    _toy(cluster)
    stale = cluster.start_worker()
    team = cluster.user("bob", team="blue")
    sid = cluster.submit(team, _sleepy_entry(cluster, "sleepy", 2)).submission
    pid = _running_exam(cluster, sid)
    stale.signal(signal.SIGSTOP)  # frozen past its lease, as a paused or partitioned machine
    cluster.start_worker()
    # Frozen in the middle of a transaction (it counts cases as they end), the stale worker
    # holds the job's row until PostgreSQL ends its idle transaction (a minute): then the
    # reaper takes the job back and the other worker runs it.
    _done(cluster, sid, timeout=150)
    (job,) = cluster.jobs_of(sid)
    stale.signal(signal.SIGCONT)
    stale.wait_log(f"job {job.id} attempt 1: lease lost", 30)  # even if its session was ended
    (result,) = cluster.results_of(job.id)
    assert (result.attempt, result.status) == (2, "scored")
    attempts = cluster.attempts_of(job.id)
    assert [(a.attempt, a.outcome) for a in attempts] == [(1, "lost"), (2, "scored")]
    assert attempts[0].worker.split(":")[1] == str(pid)
    assert cluster.jobs_of(sid)[0].result_attempt == 2


KILLER = """  te01)
    p=$PPID
    while [ "$p" -gt 1 ]; do
      if tr '\\0' ' ' < /proc/$p/cmdline | grep -q 'proctor worker'; then
        kill -KILL "$p"; sleep 5; exit 0
      fi
      p=$(cut -d' ' -f4 /proc/$p/stat)
    done ;;"""


def test_an_entry_killing_its_worker_ends_failed_infrastructure_refunded(
    cluster: Cluster,
) -> None:
    """The entry really kills the pool process running it: under the ``process`` backend
    (trusted code, no pid namespace) it finds its ancestor `proctor worker` process and
    SIGKILLs it. Under bwrap it could not reach the worker, which is the point of bwrap."""
    _toy(cluster, quota={"total": 1})
    cluster.start_worker({"PROCTOR_SANDBOX": "process", "PROCTOR_ALLOW_UNSANDBOXED": "1"})
    team = cluster.user("mallory", team="red")
    entry = make_exam_entry(cluster.root / "entries" / "killer", KILLER)
    sid = cluster.submit(team, entry).submission
    _done(cluster, sid, timeout=120)
    (job,) = cluster.jobs_of(sid)
    assert (job.state, job.failure, job.flagged) == (JobState.FAILED, "infrastructure", True)
    assert cluster.results_of(job.id) == []
    assert [(a.attempt, a.outcome) for a in cluster.attempts_of(job.id)] == [
        (1, "lost"), (2, "lost"), (3, "lost"),
    ]  # fmt: skip
    assert len({a.worker for a in cluster.attempts_of(job.id)}) == 3  # a new pool process each
    shown = status(cluster.platform, team, sid)
    assert (shown.status, shown.failure) == ("failed", "infrastructure")
    again = cluster.submit(team, _sleepy_entry(cluster, "honest", 0))  # the quota was refunded
    _done(cluster, again.submission)
    with pytest.raises(RefusedError, match="used all 1 submissions"):
        cluster.submit(team, _sleepy_entry(cluster, "third", 0))


def test_serve_with_celery_killed_mid_queue_and_restarted_loses_nothing(
    cluster: Cluster,
) -> None:
    _toy(cluster)
    cluster.start_worker()
    token = add_user(cluster.platform, "bob", team="blue").token
    serve = ["serve", "--executor", "celery", "--port", "0", "--json"]
    server = cluster.spawn(serve)
    url = server.announced["url"]
    sids = [
        _submit_over_http(url, token, cluster, _sleepy_entry(cluster, f"e{index}", 1))
        for index in range(3)
    ]
    _running_exam(cluster, sids[0])
    server.kill()
    assert all(j.state != JobState.DONE for sid in sids[1:] for j in cluster.jobs_of(sid))
    cluster.spawn(serve)
    for sid in sids:
        _done(cluster, sid)
    for sid in sids:
        (job,) = cluster.jobs_of(sid)
        assert job.state == JobState.DONE
        assert [r.status for r in cluster.results_of(job.id)] == ["scored"]
    assert cluster.result_count() == len(sids)


def _submit_over_http(url: str, token: str, cluster: Cluster, entry: Path) -> str:
    """Submit ``entry`` to the server at ``url`` as the CLI does (its HTTP client)."""
    archive = entry.with_suffix(".tar.gz")
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(entry, arcname="entry")
    client = Client(url, token)
    try:
        receipt = client.submit(archive, "toy", None)
    finally:
        client.close()
    assert receipt.status == "queued"
    return receipt.submission


def test_a_team_with_nothing_running_goes_before_another_teams_earlier_jobs(
    cluster: Cluster,
) -> None:
    _toy(cluster)
    flood, late = cluster.user("fay", team="flood"), cluster.user("lu", team="late")
    entry = _sleepy_entry(cluster, "e", 0)
    by_team = {cluster.submit(flood, entry).submission: "flood" for _ in range(3)}
    by_team[cluster.submit(late, entry).submission] = "late"
    cluster.start_worker()  # one job at a time, every job already queued
    for sid in by_team:
        _done(cluster, sid)
    starts = sorted(
        (cluster.attempts_of(job.id)[0].started, team)
        for sid, team in by_team.items()
        for job in cluster.jobs_of(sid)
    )
    assert [team for _, team in starts] == ["flood", "late", "flood", "flood"]
