"""Run groups: the bookkeeping that lets one session be cancelled without the others."""

from __future__ import annotations

from proctor.sandbox.runs import RunGroup


class Run:
    def __init__(self) -> None:
        self.kills = 0

    def kill(self) -> None:
        self.kills += 1


def test_cancel_kills_the_members_and_every_run_that_joins_later() -> None:
    runs, early, late = RunGroup(), Run(), Run()
    runs.join(early.kill)
    runs.cancel()
    assert runs.cancelled and early.kills == 1
    runs.join(late.kill)  # a run that was launching while cancel() ran
    assert late.kills == 1


def test_a_run_that_left_is_not_killed() -> None:
    runs, done = RunGroup(), Run()
    runs.join(done.kill)
    runs.leave(done.kill)
    runs.cancel()
    assert done.kills == 0


def test_kill_running_spares_later_runs_and_leaves_the_group_usable() -> None:
    runs, now, later = RunGroup(), Run(), Run()
    runs.join(now.kill)
    runs.kill_running()
    runs.join(later.kill)
    assert (now.kills, later.kills, runs.cancelled) == (1, 0, False)


def test_groups_are_independent() -> None:
    mine, theirs = RunGroup(), RunGroup()
    their_run = Run()
    theirs.join(their_run.kill)
    mine.cancel()
    assert their_run.kills == 0 and not theirs.cancelled
