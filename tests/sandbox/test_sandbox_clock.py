"""A run that starts its own wall clock (``Limits.start_s``), in the real bwrap sandbox.

Each test runs once as a sandbox of its own (``run``) and once as a case of the session
(``run_case``: a case server's fork as root, which keeps a clock pipe per case; a first case
with the same limits starts the server, since a configuration's first case does not wait for it).
"""

from __future__ import annotations

import pytest

from proctor.sandbox.base import Limits, Outcome, RunSpec, SandboxSession
from proctor.sandbox.bwrap import BwrapSandbox

pytestmark = [pytest.mark.sandbox, pytest.mark.parametrize("way", ["run", "run_case"])]


def run(session: SandboxSession, way: str, argv: list[str], limits: Limits) -> Outcome:
    """``argv`` as a run of its own or as a case on the session's server (warmed first)."""
    if way == "run_case":
        session.run_case(RunSpec(["/bin/true"], mounts=[], limits=limits))
    return getattr(session, way)(RunSpec(argv, limits=limits))  # type: ignore[no-any-return]


START_THEN_SPIN = (
    'import os, time\ntime.sleep(1.5)\nos.write(int(os.environ["PROCTOR_CLOCK_FD"]), b"1")\n'
    "time.sleep(30)\n"
)


def test_the_wall_clock_counts_from_the_byte_on_the_clock_pipe(
    sandbox: BwrapSandbox, way: str
) -> None:
    with sandbox.session() as session:
        outcome = run(
            session, way, ["python3", "-c", START_THEN_SPIN], Limits(wall_s=1, start_s=10)
        )
    assert outcome.timed_out
    assert outcome.clock_started_s is not None and outcome.clock_started_s >= 1.5
    assert 1.0 <= outcome.clocked_s < 4.0


def test_a_run_that_never_starts_its_clock_ends_at_start_s(sandbox: BwrapSandbox, way: str) -> None:
    with sandbox.session() as session:
        outcome = run(
            session,
            way,
            ["python3", "-c", "import time; time.sleep(30)"],
            Limits(wall_s=20, start_s=1),
        )
    assert outcome.timed_out and outcome.clock_started_s is None
    assert 1.0 <= outcome.wall_s < 4.0


def test_a_run_without_start_s_gets_no_clock_pipe(sandbox: BwrapSandbox, way: str) -> None:
    with sandbox.session() as session:
        outcome = run(
            session, way, ["sh", "-c", 'echo "[${PROCTOR_CLOCK_FD:-none}]"'], Limits(wall_s=5)
        )
    assert outcome.stdout.strip() == "[none]" and outcome.clock_started_s is None


def test_a_run_within_its_budget_reports_when_its_clock_started(
    sandbox: BwrapSandbox, way: str
) -> None:
    script = (
        'import os, time\ntime.sleep(0.5)\nos.write(int(os.environ["PROCTOR_CLOCK_FD"]), b"1")\n'
    )
    with sandbox.session() as session:
        outcome = run(session, way, ["python3", "-c", script], Limits(wall_s=10, start_s=10))
    assert outcome.succeeded, outcome
    assert outcome.clock_started_s is not None and 0.5 <= outcome.clock_started_s < outcome.wall_s
    assert outcome.clocked_s < 2.0
