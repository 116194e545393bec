"""The scripted fake sandbox: what layers above the sandbox test against."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sandbox_helpers import wait_until

from proctor.errors import PlatformError
from proctor.sandbox.base import CANCELLED, Limits, MiB, Mount, Outcome, RunSpec
from proctor.sandbox.fake import FakeRequest, FakeSandbox


def succeed(request: FakeRequest) -> Outcome:
    return Outcome(exit_status=0)


def wait_for_cancel(request: FakeRequest) -> Outcome:
    """Plays a run that would go on for a minute unless it is killed."""
    request.cancelled.wait(60)
    return Outcome(exit_status=0)


def test_a_handler_writes_into_the_mounted_home_like_an_entry(tmp_path: Path) -> None:
    def entry(request: FakeRequest) -> Outcome:
        record = request.argv[-1]
        answer = request.host_path(f"/home/out/{record}.txt")
        answer.write_text(request.env["LABEL"])
        return Outcome(exit_status=0, wall_s=0.5)

    sandbox = FakeSandbox(entry)
    with (
        sandbox.session() as session,
        session.workspace(tmp_path / "home", size_bytes=MiB) as home,
    ):
        (home / "out").mkdir()
        session.give(home)
        outcome = session.run(
            RunSpec(
                ["./next.sh", "r01"],
                mounts=[Mount(home, "/home", writable=True)],
                limits=Limits(wall_s=5),
                env={"LABEL": "A"},
                cwd="/home",
            )
        )
        assert outcome.succeeded
        assert (home / "out" / "r01.txt").read_text() == "A"
    assert not (tmp_path / "home").exists()
    (request,) = sandbox.requests
    assert (request.argv, request.cwd, request.slot) == (("./next.sh", "r01"), "/home", 0)
    assert request.limits == Limits(wall_s=5)


def test_cancel_unblocks_a_waiting_fake_run_and_later_runs_never_reach_the_handler() -> None:
    sandbox = FakeSandbox(wait_for_cancel)
    with ThreadPoolExecutor(1) as pool, sandbox.session() as session:
        future = pool.submit(session.run, RunSpec(["train"], limits=Limits()))
        assert wait_until(lambda: len(sandbox.requests) == 1, 5)
        session.cancel()
        assert future.result(timeout=5) == CANCELLED
        assert session.run(RunSpec(["predict"], mounts=[], limits=Limits())) == CANCELLED
    assert [r.argv for r in sandbox.requests] == [("train",)]


def test_cancelling_one_fake_session_leaves_the_other_running() -> None:
    sandbox = FakeSandbox(wait_for_cancel)
    with (
        ThreadPoolExecutor(2) as pool,  # joined last: leaving the sessions ends their runs
        sandbox.session() as doomed,
        sandbox.session() as survivor,
    ):
        pool.submit(doomed.run, RunSpec(["a"], limits=Limits()))
        pool.submit(survivor.run, RunSpec(["b"], limits=Limits()))
        assert wait_until(lambda: len(sandbox.requests) == 2, 5)
        doomed.cancel()
        by_slot = {r.slot: r for r in sandbox.requests}
        assert by_slot[doomed.slot].cancelled.wait(5)
        assert not by_slot[survivor.slot].cancelled.is_set()
    assert by_slot[survivor.slot].cancelled.is_set()  # leaving the session cancelled it


def test_fake_sessions_get_distinct_slots_until_none_is_left() -> None:
    sandbox = FakeSandbox(succeed, slots=2)
    with sandbox.session() as first, sandbox.session() as second:
        assert {first.slot, second.slot} == {0, 1}
        with pytest.raises(PlatformError, match="busy"), sandbox.session():
            pass
    with sandbox.session() as again:
        assert again.slot == 0


def test_cancel_all_kills_the_runs_under_way_but_not_the_later_ones() -> None:
    sandbox = FakeSandbox(wait_for_cancel)
    with ThreadPoolExecutor(2) as pool, sandbox.session() as session, sandbox.session() as other:
        in_session = pool.submit(session.run, RunSpec(["a"], limits=Limits()))
        in_other = pool.submit(other.run, RunSpec(["b"], limits=Limits()))
        assert wait_until(lambda: len(sandbox.requests) == 2, 5)
        sandbox.cancel_all()
        assert in_session.result(timeout=5) == CANCELLED
        assert in_other.result(timeout=5) == CANCELLED
        assert not session.cancelled
        sandbox.handler = succeed
        assert session.run(RunSpec(["c"], mounts=[], limits=Limits())).succeeded


def test_host_path_names_the_mount_that_shows_a_path(tmp_path: Path) -> None:
    request = FakeRequest(
        argv=("x",),
        mounts=(Mount(tmp_path, "/data"), Mount(tmp_path / "inner", "/data/inner")),
        limits=Limits(),
        env={},
        cwd="/",
        slot=0,
    )
    assert request.host_path("/data/a.txt") == tmp_path / "a.txt"
    assert request.host_path("/data/inner/b") == tmp_path / "inner" / "b"
    with pytest.raises(KeyError, match="/elsewhere"):
        request.host_path("/elsewhere/c")
