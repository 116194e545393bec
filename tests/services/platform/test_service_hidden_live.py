"""The live status during hidden stages, with the real job function in the real sandbox.

A worker (``executor.run.run_next``) runs the toy challenge's job in bubblewrap while the team
polls ``status`` as fast as it can: in a phase whose exam is disclosed at ``counts`` it sees
``prep``, ``quiz``, then only ``hidden`` (no stage name, no queue position) until the result
appears, where the organizer sees ``exam`` and ``score``. A submission cancelled while it is
evaluated on hidden data still counts and shows ``cancelled`` with ``report: null``.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from service_seed import Seeded, run_queued, seed, submit
from toy_challenge import make_exam_entry

from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform import submissions
from proctor.services.platform.accounts import authenticate
from proctor.services.platform.quota import submission_counts
from proctor.services.platform.shown_status import HIDDEN_STAGE
from proctor.settings import Settings
from proctor.store.models import SubmissionRow

pytestmark = pytest.mark.sandbox

SLOW_EXAM = '  te0*) sleep 2; exec ./good.sh "$1" ;;'


def _poll(seeded: Seeded, sid: str, worker: threading.Thread) -> tuple[list[Any], list[Any]]:
    """Every distinct (status, stage, position) the team and the organizer saw, in order."""
    team = authenticate(seeded.platform, seeded.tokens["alice"])
    organizer = authenticate(seeded.platform, seeded.tokens["olga"])
    seen: tuple[list[Any], list[Any]] = ([], [])
    while True:
        alive = worker.is_alive()
        for principal, found in zip((team, organizer), seen, strict=True):
            shown = submissions.status(seeded.platform, principal, sid)
            state = (shown.status, shown.stage, shown.queue_position)
            if not found or found[-1] != state:
                found.append(state)
        if not alive:
            return seen


def _worker(seeded: Seeded, sandbox: BwrapSandbox, settings: Settings) -> threading.Thread:
    thread = threading.Thread(target=run_queued, args=(seeded, sandbox, settings), daemon=True)
    thread.start()
    return thread


def test_polling_shows_no_hidden_stage_and_a_cancel_during_one_still_counts(
    shared_dir: Path, sandbox: BwrapSandbox, sandbox_settings: Settings
) -> None:
    seeded = seed(shared_dir / "service")
    entry = make_exam_entry(shared_dir / "entry", SLOW_EXAM)
    sid = submit(seeded, "alice", entry)
    worker = _worker(seeded, sandbox, sandbox_settings)
    team, organizer = _poll(seeded, sid, worker)
    worker.join()
    assert any(stage == "exam" for _, stage, _ in organizer)  # the exam ran while polled
    assert {stage for _, stage, _ in team} <= {None, "prep", "quiz", HIDDEN_STAGE}, team
    assert (HIDDEN_STAGE in {stage for _, stage, _ in team}) and team[-1][0] == "scored"
    assert all(position is None for _, stage, position in team if stage == HIDDEN_STAGE)

    cancelled = submit(seeded, "alice", entry)
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    worker = _worker(seeded, sandbox, sandbox_settings)
    while submissions.status(seeded.platform, alice, cancelled).stage != HIDDEN_STAGE:
        assert worker.is_alive(), "the job ended before its exam was seen"
    shown = submissions.cancel(seeded.platform, alice, cancelled)
    worker.join()
    shown = submissions.status(seeded.platform, alice, cancelled)
    assert (shown.status, shown.report) == ("cancelled", None)
    with seeded.platform.db() as session:
        row = session.get(SubmissionRow, cancelled)
        assert row is not None and submission_counts(session, row)
    seeded.platform.close()
