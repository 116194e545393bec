"""A rescore previewed before it is applied, through the REST API, on SQLite and PostgreSQL.

The organizer sees each score and rank before and after while nothing changes; applying
stores exactly the previewed numbers; a preview that no longer holds (a submission scored
since, a newer bundle) is refused with what changed and the scores stay; previewing again
reuses what did not change; cancelling drops it. Participants are told none of it exists.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_boards_fixtures import Svc, start
from sqlalchemy import func, select
from toy_challenge import HIDDEN, LENGTH, good_answer

from proctor.services.platform import rescore_jobs
from proctor.services.platform.resources import Platform
from proctor.store.models import AuditEvent, Result, Score, ScoreVersion

PREVIEW = "/challenges/toy/phases/open/rescore/preview"


@pytest.fixture
def svc(database_url: str, tmp_path: Path) -> Iterator[Svc]:
    service = start(database_url, tmp_path)
    yield service
    service.client.close()
    Platform.close(service.platform)


def _poor() -> dict[str, str]:
    """Exam outputs that rank the first half of each record above the second."""
    text = "".join("0.950\n" if i < LENGTH // 2 else "0.900\n" for i in range(LENGTH))
    return {f"{record}.vec": text for record in HIDDEN}


def _stored(svc: Svc) -> dict[str, Any]:
    """Every score, score version and report as stored now."""
    with svc.platform.db() as session:
        return {
            "scores": sorted(session.execute(select(Score.job_id, Score.metric, Score.value))),
            "versions": session.scalar(select(func.count()).select_from(ScoreVersion)),
            "reports": sorted(session.execute(select(Result.job_id, Result.report))),
        }


def _two_teams(svc: Svc) -> None:
    good = svc.keep_outputs({f"{r}.vec": good_answer() for r in HIDDEN})
    svc.scored("b1", "blue", "open", {"auprc": 0.5, "auroc": 0.5}, run_artifact=good)
    svc.scored(
        "r1", "red", "open", {"auprc": 0.9, "auroc": 0.9}, run_artifact=svc.keep_outputs(_poor())
    )


def test_a_preview_changes_nothing_and_applying_stores_exactly_its_numbers(svc: Svc) -> None:
    _two_teams(svc)
    before = _stored(svc)
    assert svc.post(PREVIEW, "bob")[0] == 404  # participants: no such thing
    status, shown = svc.post(PREVIEW, "olga")
    assert status == 200 and shown["applied"] is False
    diff = {job["submission"]: job["changes"] for job in shown["jobs"]}
    assert diff["b1"]["auprc"] == {"old": 0.5, "new": 1.0}
    moves = {m["team"]: (m["old"]["rank"], m["new"]["rank"]) for m in shown["rank_changes"]}
    assert moves == {"blue": (2, 1), "red": (1, 2)}
    assert _stored(svc) == before  # the trial was rolled back
    assert svc.get(f"/challenges/toy/rescores/{shown['preview']}", "olga") == (200, shown)
    assert svc.get(f"/challenges/toy/rescores/{shown['preview']}", "carol")[0] == 404

    status, applied = svc.post(f"/challenges/toy/rescores/{shown['preview']}/apply", "olga")
    assert status == 200 and applied["applied"] is True
    assert {k: v for k, v in applied.items() if k != "applied"} == {
        k: v for k, v in shown.items() if k != "applied"
    }
    with svc.platform.db() as session:
        auprc = session.scalars(select(Score.value).where(Score.metric == "auprc")).all()
        actions = session.scalars(select(AuditEvent.action)).all()
    assert sorted(auprc) == sorted(job["changes"]["auprc"]["new"] for job in shown["jobs"])
    assert "rescore.preview" in actions and "rescore" in actions
    again = svc.post(f"/challenges/toy/rescores/{shown['preview']}/apply", "olga")
    assert again[0] == 404 and "applied, cancelled or replaced" in again[1]["error"]["message"]


def test_a_preview_is_not_applied_once_a_submission_landed_and_previewing_again_reuses_it(
    svc: Svc, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_teams(svc)
    _, shown = svc.post(PREVIEW, "olga")
    good = svc.keep_outputs({f"{r}.vec": good_answer() for r in HIDDEN})
    svc.scored("b2", "blue", "open", {"auprc": 0.7, "auroc": 0.7}, run_artifact=good)
    before = _stored(svc)
    status, refused = svc.post(f"/challenges/toy/rescores/{shown['preview']}/apply", "olga")
    assert status == 409
    message = refused["error"]["message"]
    assert "no longer holds: 1 job scored since" in message and "preview" in message
    assert _stored(svc) == before

    scored_again: list[str] = []
    real = rescore_jobs.score_again

    def counted(platform: Platform, challenge: Any, job: rescore_jobs.Kept) -> Any:
        scored_again.append(job.submission)
        return real(platform, challenge, job)

    monkeypatch.setattr("proctor.services.platform.rescore.score_again", counted)
    _, fresh = svc.post(PREVIEW, "olga")
    assert scored_again == ["b2"]  # b1 and r1 are as the first preview read them
    assert {job["submission"] for job in fresh["jobs"]} == {"b1", "r1", "b2"}
    assert svc.get(f"/challenges/toy/rescores/{shown['preview']}", "olga")[0] == 404  # replaced
    assert svc.post(f"/challenges/toy/rescores/{fresh['preview']}/apply", "olga")[0] == 200


def test_a_preview_is_not_applied_after_a_newer_bundle_and_a_cancelled_one_is_gone(
    svc: Svc, tmp_path: Path
) -> None:
    _two_teams(svc)
    _, shown = svc.post(PREVIEW, "olga")
    assert svc.install_flipped(tmp_path) == 2
    status, refused = svc.post(f"/challenges/toy/rescores/{shown['preview']}/apply", "olga")
    assert (
        status == 409
        and "version 2 of the bundle was installed since" in refused["error"]["message"]
    )

    _, fresh = svc.post(PREVIEW, "olga")
    assert fresh["challenge_version"] == 2
    headers = {"Authorization": f"Bearer {svc.tokens['olga']}"}
    url = f"/api/v1/challenges/toy/rescores/{fresh['preview']}"
    assert (
        svc.client.delete(url, headers={"Authorization": f"Bearer {svc.tokens['bob']}"}).status_code
        == 404
    )
    cancelled = svc.client.delete(url, headers=headers)
    assert cancelled.status_code == 200 and cancelled.json()["cancelled"] is True
    assert svc.post(f"/challenges/toy/rescores/{fresh['preview']}/apply", "olga")[0] == 404
