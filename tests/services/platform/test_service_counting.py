"""What counts against a quota, and that nothing scored shows for a submission that does not.

Through the real service on SQLite and PostgreSQL (results stored as a worker commits them):

* a multi-task submission cancelled after one task was scored counts (a job reached hidden
  data), its ``status`` says ``cancelled`` with ``report: null``, and it is on no board;
* one cancelled before any hidden stage is free;
* one the platform failed on one task before it reached hidden data is free, and the task that
  scored shows nothing (status, boards); after hidden data such a failure is refunded once per
  team and phase, later ones by an organizer (else it counts and shows);
* in a Ladder phase the team's own report shows only the Ladder's value (finding 6).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
import yaml
from service_boards_fixtures import Svc, start
from sqlalchemy import select, update
from toy_challenge import make_challenge

from proctor.errors import RefusedError
from proctor.executor.run import _StageRecorder
from proctor.executor.runtime import WorkerRuntime
from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.progress import StageKey
from proctor.pipeline.report import StageReport, TaskReport
from proctor.pipeline.report_codec import to_data
from proctor.resolve import load_challenge
from proctor.services.platform import publications
from proctor.services.platform.installs import install
from proctor.services.platform.quota import check_quota
from proctor.services.platform.resources import Platform
from proctor.store import jobs
from proctor.store.models import Job, Result, SubmissionRow, Team
from proctor.types import Failure, JobState, RunStatus, Stage, StageStatus

TASKS = ("arousal", "arousal2")
EXAM_COUNTS = "exam: 3 cases, 2 passed, 1 failed (0 timed out)"


@pytest.fixture
def svc(database_url: str, tmp_path: Path) -> Iterator[Svc]:
    service = start(database_url, tmp_path)
    _install_duo(service, tmp_path / "duo")
    yield service
    service.client.close()
    Platform.close(service.platform)


def _install_duo(svc: Svc, root: Path) -> None:
    """Challenge ``duo``: the toy's task twice, phase ``two`` with a quota of one submission."""
    folder = make_challenge(root)
    path = folder / "challenge.yaml"
    spec = yaml.safe_load(path.read_text())
    spec["name"] = "duo"
    spec["tasks"].append({**spec["tasks"][0], "name": "arousal2"})
    spec["phases"] = [{"name": "two", "tasks": list(TASKS), "quota": {"total": 1}}]
    path.write_text(yaml.safe_dump(spec))
    install(svc.platform, svc.principal("olga"), str(folder))


def _job(svc: Svc, sid: str, task: str) -> int:
    with svc.platform.db() as session:
        found = session.scalar(select(Job.id).where(Job.submission_id == sid, Job.task == task))
    assert found is not None
    return found


def _add_job(svc: Svc, sid: str, task: str, **values: object) -> int:
    with svc.platform.db.begin() as session:
        job = Job(submission_id=sid, task=task, queued_at=svc.clock, **values)
        session.add(job)
        session.flush()
        return job.id


def _platform_failed(svc: Svc, sid: str, task: str, *, hidden: bool) -> None:
    """Task ``task`` of ``sid`` failed by the platform, committed as a worker does.

    ``hidden``: the failure came after the job started its exam.
    """
    job_id = _add_job(svc, sid, task, state=JobState.QUEUED)
    lease = jobs.claim(svc.platform.db, "worker", 60.0, job_id=job_id)
    assert lease is not None
    stage = Stage.SCORE if hidden else Stage.PREP
    assert jobs.set_stage(svc.platform.db, lease, str(stage), hidden=hidden)
    message = f"the platform failed during {stage} (E-PLATFORM)"
    exam = StageReport(Stage.EXAM, StageStatus.PASSED, EXAM_COUNTS, task=task)
    shown = (exam,) if hidden else ()
    shown += (StageReport(stage, StageStatus.FAILED, message, task=task),)
    report = TaskReport(task, RunStatus.FAILED, shown, Failure.PLATFORM, stage)
    outcome = jobs.Outcome("failed", str(Failure.PLATFORM), json.dumps(to_data(report)))
    assert jobs.commit(svc.platform.db, lease, outcome)


def _quota_refuses(svc: Svc, team: str) -> bool:
    challenge = load_challenge(svc.bundle.parent / "duo")
    with svc.platform.db() as session:
        team_id = session.scalar(select(Team.id).where(Team.name == team))
        assert team_id is not None
        try:
            check_quota(session, challenge.phase("two"), team_id, "duo", time.time())
        except RefusedError:
            return True
    return False


def _on_board(svc: Svc, sid: str) -> bool:
    status, board = svc.get("/challenges/duo/leaderboards/all", "olga", phase="two")
    assert status == 200 and isinstance(board, dict)
    return any(row["submission"] == sid for row in board["rows"])


def test_cancelled_after_a_task_was_scored_counts_and_shows_nothing(svc: Svc) -> None:
    sid = svc.scored_tasks("d1", "blue", "two", "duo", {"arousal": {"auprc": 0.61, "auroc": 0.8}})
    with svc.platform.db.begin() as session:
        session.execute(update(Job).where(Job.submission_id == sid).values(
            hidden_started=time.time()))  # fmt: skip
    _add_job(svc, sid, "arousal2", state=JobState.QUEUED)
    assert svc.post(f"/submissions/{sid}/cancel", "bob")[0] == 200
    status, shown = svc.get(f"/submissions/{sid}", "bob")
    assert status == 200 and isinstance(shown, dict)
    assert (shown["status"], shown["report"]) == ("cancelled", None)
    assert not _on_board(svc, sid)
    assert _quota_refuses(svc, "blue")  # it reached hidden data: it counts
    with pytest.raises(RefusedError):
        publications.publish(svc.platform, svc.principal("bob"), sid, "arousal")


def test_cancelled_before_any_hidden_stage_is_free(svc: Svc) -> None:
    with svc.platform.db.begin() as session:
        team_id = session.scalar(select(Team.id).where(Team.name == "blue"))
        session.add(SubmissionRow(id="q1", team_id=team_id, user_id=2, challenge_id=2,
                                  challenge="duo", phase="two", upload_sha256="0" * 64,
                                  created=time.time()))  # fmt: skip
    for task in TASKS:
        _add_job(svc, "q1", task, state=JobState.QUEUED)
    lease = jobs.claim(svc.platform.db, "worker", 60.0, job_id=_job(svc, "q1", "arousal"))
    assert lease is not None and jobs.set_stage(svc.platform.db, lease, "quiz")
    assert svc.post("/submissions/q1/cancel", "bob")[0] == 200
    # the worker's exam would start after the cancel: nothing is recorded, the job stops
    assert not jobs.set_stage(svc.platform.db, lease, "exam", hidden=True)
    assert not _quota_refuses(svc, "blue")


def _withheld(svc: Svc, sid: str) -> bool:
    """True when ``sid`` shows nothing scored: its team's status and the boards."""
    status, shown = svc.get(f"/submissions/{sid}", "bob")
    assert status == 200 and isinstance(shown, dict)
    assert (shown["status"], shown["failure"]) == ("failed", "platform")
    assert "arousal2" in json.dumps(shown["report"]["stages"])
    text = json.dumps(shown)
    hidden = shown["report"]["scores"] == {} and "0.61" not in text and EXAM_COUNTS not in text
    assert hidden is not _on_board(svc, sid)
    return hidden


def test_a_platform_failure_makes_it_free_and_withholds_the_other_tasks_score(svc: Svc) -> None:
    sid = svc.scored_tasks("d2", "blue", "two", "duo", {"arousal": {"auprc": 0.61, "auroc": 0.8}})
    _platform_failed(svc, sid, "arousal2", hidden=False)
    assert _withheld(svc, sid)
    assert not _quota_refuses(svc, "blue")


def test_platform_failures_after_hidden_data_are_refunded_once_then_by_an_organizer(
    svc: Svc,
) -> None:
    scores = {"arousal": {"auprc": 0.61, "auroc": 0.8}}
    first = svc.scored_tasks("h1", "blue", "two", "duo", scores)
    _platform_failed(svc, first, "arousal2", hidden=True)
    assert _withheld(svc, first) and not _quota_refuses(svc, "blue")
    second = svc.scored_tasks("h2", "blue", "two", "duo", scores)
    _platform_failed(svc, second, "arousal2", hidden=True)
    assert not _withheld(svc, second) and _quota_refuses(svc, "blue")  # it counts, it shows
    status, flagged = svc.get("/flagged", "olga")
    assert status == 200 and isinstance(flagged, dict)
    assert [(f["submission"], f["refunded"]) for f in flagged["flagged"]] == [
        (first, True),
        (second, False),
    ]
    assert svc.post(f"/submissions/{second}/refund", "olga")[0] == 200
    assert _withheld(svc, second) and not _quota_refuses(svc, "blue")


def _with_exact_figures(svc: Svc, sid: str) -> None:
    """Give ``sid``'s stored report per-record values and exam figures, as a worker may."""
    job_id = _job(svc, sid, "arousal")
    with svc.platform.db.begin() as session:
        result = session.scalar(select(Result).where(Result.job_id == job_id))
        assert result is not None
        data = json.loads(result.report)
        data["per_record"] = {"te01": {"auprc": 0.7012}}
        data["efficiency"] = {"cpu_s_per_case": 1.0}
        result.report = json.dumps(data)


def test_in_a_ladder_phase_the_team_sees_only_the_ladder_value(svc: Svc) -> None:
    shown_values = []
    for sid, exact in (("b1", 0.7012), ("b2", 0.7081), ("b3", 0.7503)):
        svc.scored(sid, "blue", "open", {"auprc": exact, "auroc": 0.8})
        _with_exact_figures(svc, sid)
        status, shown = svc.get(f"/submissions/{sid}", "bob")
        assert status == 200 and isinstance(shown, dict)
        report = shown["report"]
        assert set(report["scores"]["arousal"]) == {"auprc"}  # no other metric of the task
        assert "per_record" not in report and report["efficiency"] == {}
        shown_values.append(report["scores"]["arousal"]["auprc"])
        board = svc.get("/challenges/toy/leaderboards/provisional")[1]
        assert isinstance(board, dict)
        assert board["rows"][0]["scores"]["arousal"]["auprc"] == shown_values[-1]
    assert shown_values == pytest.approx([0.70, 0.70, 0.75])
    status, organizer = svc.get("/submissions/b2", "olga")
    assert (
        isinstance(organizer, dict) and organizer["report"]["scores"]["arousal"]["auprc"] == 0.7081
    )


def test_a_builds_steps_show_as_prep_cases_on_the_submission_until_the_image_is_ready(
    svc: Svc,
) -> None:
    with svc.platform.db.begin() as session:
        team_id = session.scalar(select(Team.id).where(Team.name == "blue"))
        session.add(SubmissionRow(id="s1", team_id=team_id, user_id=2, challenge_id=2,
                                  challenge="duo", phase="two", upload_sha256="0" * 64,
                                  created=time.time()))  # fmt: skip
    _add_job(svc, "s1", "arousal", state=JobState.QUEUED)
    lease = jobs.claim(svc.platform.db, "worker", 60.0, job_id=_job(svc, "s1", "arousal"))
    assert lease is not None
    runtime = cast(WorkerRuntime, SimpleNamespace(db=svc.platform.db))
    recorder = _StageRecorder(runtime, lease, CancelToken())
    prep = StageKey("arousal", Stage.PREP)

    def shown() -> tuple[object, object]:
        status, answer = svc.get("/submissions/s1", "bob")
        assert status == 200 and isinstance(answer, dict)
        return answer["stage"], answer["cases"]

    recorder.stage_started(prep, 0)
    assert shown() == ("prep", None)
    for done in range(3):
        recorder.stage_step(prep, done, 3, f"STEP {done + 1}/3: RUN step")
    assert shown() == ("prep", {"done": 2, "total": 3})
    recorder.stage_step(prep, 3, 3, "image sha256:0123 built")
    assert shown() == ("prep", None)  # the rest of prep counts nothing
