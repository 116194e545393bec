"""The service's leaderboards through the REST API, on SQLite and PostgreSQL.

Declared boards in JSON and CSV, the Ladder (a slightly better resubmission does not move the
shown score), best_published (only what a team published), boards refused to whoever may not
read them (private ones; every board of a phase that shows no score), final entries defaulting
to the last scored, and a rescore after an updated bundle reporting what changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from service_boards_fixtures import Svc, start
from sqlalchemy import select
from toy_challenge import HIDDEN, LENGTH, good_answer

from proctor.errors import NotFoundError
from proctor.leaderboard import rows_from_csv
from proctor.services.platform import publications
from proctor.services.platform.board_entries import StoredEntry, task_parts
from proctor.services.platform.installs import install
from proctor.services.platform.resources import Platform
from proctor.store.models import Score, ScoreVersion

CONTRACT_ROW = {"rank", "team", "submission", "scores", "ci95", "mean_rank"}


@pytest.fixture
def svc(database_url: str, tmp_path: Path) -> Iterator[Svc]:
    service = start(database_url, tmp_path)
    yield service
    service.client.close()
    Platform.close(service.platform)


def test_a_declared_board_comes_through_the_api_as_the_contracts_json_and_as_csv(
    svc: Svc,
) -> None:
    svc.scored("s1", "blue", "open", {"auprc": 0.61, "auroc": 0.8})
    svc.scored("s2", "red", "open", {"auprc": 0.72, "auroc": 0.7})
    status, board = svc.get("/challenges/toy/leaderboards/finalists")
    assert status == 200 and isinstance(board, dict)
    assert (board["challenge"], board["phase"], board["board"]) == ("toy", "open", "finalists")
    assert all(set(row) >= CONTRACT_ROW for row in board["rows"])
    assert [(r["rank"], r["team"], r["submission"]) for r in board["rows"]] == [
        (1.0, "red", "s2"),
        (2.0, "blue", "s1"),
    ]
    assert board["rows"][1]["scores"] == {"arousal": {"auprc": 0.61, "auroc": 0.8}}
    status, text = svc.get("/challenges/toy/leaderboards/finalists", format="csv")
    assert status == 200 and isinstance(text, str)
    rows = rows_from_csv(text)
    assert [(r.team, r.scores["arousal"]["auprc"]) for r in rows] == [("red", 0.72), ("blue", 0.61)]
    status, error = svc.get("/challenges/toy/leaderboards/nosuch")
    assert status == 404 and isinstance(error, dict)
    assert "finalists" in error["error"]["message"]  # the phase's boards are listed


def _provisional(svc: Svc) -> dict[str, tuple[str, float]]:
    status, board = svc.get("/challenges/toy/leaderboards/provisional")
    assert status == 200 and isinstance(board, dict)
    return {r["team"]: (r["submission"], r["scores"]["arousal"]["auprc"]) for r in board["rows"]}


def test_the_ladder_keeps_a_slightly_better_resubmission_from_moving_the_shown_score(
    svc: Svc,
) -> None:
    svc.scored("b1", "blue", "open", {"auprc": 0.7012, "auroc": 0.8})
    first = _provisional(svc)
    assert first["blue"][0] == "b1" and first["blue"][1] == pytest.approx(0.70)
    svc.scored("b2", "blue", "open", {"auprc": 0.7081, "auroc": 0.8})  # within one step
    assert _provisional(svc) == first
    svc.scored("b3", "blue", "open", {"auprc": 0.7503, "auroc": 0.8})
    moved = _provisional(svc)["blue"]
    assert moved[0] == "b3" and moved[1] == pytest.approx(0.75)
    _, board = svc.get("/challenges/toy/leaderboards/provisional")
    assert isinstance(board, dict) and board["rows"][0]["ci95"] is None


def test_best_published_shows_a_teams_best_published_result_and_nothing_else(svc: Svc) -> None:
    svc.scored("b1", "blue", "open", {"auprc": 0.9, "auroc": 0.8})
    svc.scored("b2", "blue", "open", {"auprc": 0.6, "auroc": 0.8})
    svc.scored("r1", "red", "open", {"auprc": 0.7, "auroc": 0.8})
    _, board = svc.get("/challenges/toy/leaderboards/published")
    assert isinstance(board, dict) and board["rows"] == []
    assert svc.post("/submissions/b2/publish", "bob", {"task": "arousal"})[0] == 200
    _, board = svc.get("/challenges/toy/leaderboards/published")
    assert isinstance(board, dict)
    assert [(r["team"], r["scores"]["arousal"]["auprc"]) for r in board["rows"]] == [
        ("blue", 0.6)
    ]  # the unpublished 0.9 stays private
    svc.post("/submissions/b1/publish", "bob", {"task": "arousal"})
    svc.post("/submissions/b2/publish", "bob", {"task": "arousal", "published": False})
    _, board = svc.get("/challenges/toy/leaderboards/published")
    assert isinstance(board, dict) and board["rows"][0]["submission"] == "b1"
    status, error = svc.post("/submissions/r1/publish", "bob", {"task": "arousal"})
    assert status == 404  # another team's submission
    status, error = svc.post("/submissions/b1/publish", "bob", {"task": "arousal", "part": "x"})
    assert status == 400 and "no part 'x'" in error["error"]["message"]


@pytest.mark.parametrize(
    ("phase", "board"),
    [("open", "secret"), ("open", "all"), ("open", "default"), ("check", "default")],
)
def test_boards_not_public_are_refused_to_participants_and_anonymous_callers(
    svc: Svc, phase: str, board: str
) -> None:
    svc.scored("b1", "blue", phase, {"auprc": 0.9, "auroc": 0.8})
    path = f"/challenges/toy/leaderboards/{board}"
    for user in (None, "bob"):
        status, error = svc.get(path, user, phase=phase)
        assert status in (401, 403) and isinstance(error, dict)
        assert "0.9" not in str(error)
    status, shown = svc.get(path, "olga", phase=phase)
    assert status == 200 and isinstance(shown, dict)
    assert shown["rows"][0]["scores"]["arousal"]["auprc"] == 0.9


def test_a_phase_without_a_guarded_board_shows_its_default_board_to_anyone(svc: Svc) -> None:
    svc.scored("b1", "blue", "plain", {"auprc": 0.9, "auroc": 0.8})
    status, board = svc.get("/challenges/toy/leaderboards/default", phase="plain")
    assert status == 200 and isinstance(board, dict) and board["rows"][0]["team"] == "blue"


def test_a_participant_sees_no_zero_filled_count_where_the_exam_shows_nothing(svc: Svc) -> None:
    svc.scored("b1", "blue", "blind", {"auprc": 0.9, "auroc": 0.8, "records_zero_filled": 2.0})
    path = "/challenges/toy/leaderboards/zeros"
    _, shown = svc.get(path, "bob", phase="blind")
    assert isinstance(shown, dict) and shown["metrics"] == ["auprc"]
    assert shown["rows"][0]["scores"] == {"arousal": {"auprc": 0.9}}
    _, full = svc.get(path, "olga", phase="blind")
    assert isinstance(full, dict)
    assert full["rows"][0]["scores"]["arousal"]["records_zero_filled"] == 2.0


def test_final_entries_default_to_the_last_scored_until_the_team_chooses(svc: Svc) -> None:
    svc.scored("b1", "blue", "open", {"auprc": 0.9, "auroc": 0.8})
    svc.scored("b2", "blue", "open", {"auprc": 0.5, "auroc": 0.8})
    _, board = svc.get("/challenges/toy/leaderboards/finalists")
    assert isinstance(board, dict) and [r["submission"] for r in board["rows"]] == ["b2"]
    assert svc.post("/submissions/b1/final", "bob")[0] == 200
    _, board = svc.get("/challenges/toy/leaderboards/finalists")
    assert isinstance(board, dict) and [r["submission"] for r in board["rows"]] == ["b1"]


def _outputs(first_half: float) -> dict[str, str]:
    """Exam outputs: every hidden record's vector (``first_half`` before the midpoint)."""
    text = "".join(f"{first_half:.3f}\n" if i < LENGTH // 2 else "0.900\n" for i in range(LENGTH))
    return {f"{record}.vec": text for record in HIDDEN}


def test_a_rescore_after_an_updated_bundle_reports_what_changed_and_keeps_the_old(
    svc: Svc, tmp_path: Path
) -> None:
    good = svc.keep_outputs({f"{r}.vec": good_answer() for r in HIDDEN})
    poor = svc.keep_outputs(_outputs(0.95))  # ranks the first half above the second
    svc.scored("b1", "blue", "open", {"auprc": 0.5, "auroc": 0.5}, run_artifact=good)
    svc.scored("r1", "red", "open", {"auprc": 0.9, "auroc": 0.9}, run_artifact=poor)
    status, _ = svc.post("/challenges/toy/phases/open/rescore", "bob")
    assert status == 404  # an organizer's route: a participant is told it does not exist
    status, answer = svc.post("/challenges/toy/phases/open/rescore", "olga")
    assert status == 200, answer
    changes = {job["submission"]: job["changes"] for job in answer["jobs"]}
    assert changes["b1"]["auprc"]["old"] == 0.5 and changes["b1"]["auprc"]["new"] == 1.0
    assert changes["r1"]["auprc"]["new"] < 0.9
    assert {m["team"] for m in answer["rank_changes"]} == {"blue", "red"}
    # an updated bundle: the reference labels flipped, so the same outputs score the other way
    assert svc.install_flipped(tmp_path) == 2
    status, answer = svc.post("/challenges/toy/rescore", "olga")
    assert status == 200 and answer["challenge_version"] == 2
    changes = {job["submission"]: job["changes"] for job in answer["jobs"]}
    assert changes["b1"]["auprc"]["old"] == 1.0 and changes["b1"]["auprc"]["new"] < 0.9
    with svc.platform.db() as session:
        versions = session.scalars(select(ScoreVersion.challenge_version)).all()
        current = session.scalars(select(Score.value).where(Score.metric == "auprc")).all()
    assert sorted(versions) == [1, 1, 1, 1, 2, 2]  # the first scores, then two rescores
    assert len(current) == 2
    _, status_answer = svc.get("/submissions/b1", "bob")
    assert isinstance(status_answer, dict)
    assert status_answer["report"]["scores"]["arousal"]["auprc"] == changes["b1"]["auprc"]["new"]


def test_a_rescore_names_a_job_whose_outputs_were_not_kept(svc: Svc) -> None:
    svc.scored("b1", "blue", "open", {"auprc": 0.5, "auroc": 0.5})
    status, answer = svc.post("/challenges/toy/phases/open/rescore", "olga")
    assert status == 200 and answer["rescored"] == 0
    assert "not kept" in answer["jobs"][0]["error"]


def test_a_visceral_organ_is_a_publication_part_and_shows_only_its_metrics() -> None:
    metrics = ("organs_dice", "dice_liver", "dice_spleen", "avgdist_liver", "avgdist_spleen",
               "records")  # fmt: skip
    assert task_parts(metrics) == ["liver", "spleen"]
    from datetime import UTC, datetime

    from proctor.leaderboard import ScoredSubmission

    scored = ScoredSubmission("s", "blue", datetime.now(UTC),
                              {"CTce": {m: 0.5 for m in metrics}})  # fmt: skip
    entry = StoredEntry(scored, {"CTce": frozenset({"liver"})})
    view = entry.published_view("dice_liver")
    assert set(view.scores["CTce"]) == {"dice_liver", "avgdist_liver"}
    assert view.published == {"CTce"}
    assert entry.published_view("dice_spleen").published == frozenset()


def _organs(liver: float, spleen: float) -> dict[str, float]:
    return {"organs_dice": (liver + spleen) / 2, "dice_liver": liver, "avgdist_liver": 1.0,
            "dice_spleen": spleen, "avgdist_spleen": 2.0}  # fmt: skip


def test_visceral_teams_publish_per_organ_and_each_organ_board_takes_its_best(svc: Svc) -> None:
    install(svc.platform, svc.principal("olga"), "visceral-anatomy3")
    results = {"CTce": _organs(0.9, 0.2), "MRT1": _organs(0.7, 0.8)}
    svc.scored_tasks("b1", "blue", "final", "visceral-anatomy3", results)
    svc.scored_tasks("b2", "blue", "final", "visceral-anatomy3",
                     {"CTce": _organs(0.3, 0.95), "MRT1": _organs(0.6, 0.9)})  # fmt: skip
    publish = "/submissions/{}/publish"
    for sid, task, organ in (("b1", "CTce", "liver"), ("b2", "CTce", "spleen"),
                             ("b1", "MRT1", "liver")):  # fmt: skip
        status, answer = svc.post(publish.format(sid), "bob", {"task": task, "part": organ})
        assert status == 200, answer
    base = "/challenges/visceral-anatomy3/leaderboards/"
    _, liver = svc.get(base + "dice-liver")
    assert isinstance(liver, dict)
    [row] = liver["rows"]
    assert row["scores"] == {"CTce": {"dice_liver": 0.9}, "MRT1": {"dice_liver": 0.7}}
    assert row["sources"] == {"CTce": "b1", "MRT1": "b1"}
    _, spleen = svc.get(base + "dice-spleen")
    assert isinstance(spleen, dict)
    [row] = spleen["rows"]
    assert row["scores"] == {"CTce": {"dice_spleen": 0.95}}  # MRT1's spleen: never published
    assert svc.get(base + "default")[0] == 403  # exact unpublished results: organizers only
    assert svc.get(base + "default", "bob")[0] == 403


def test_a_submissions_choices_list_each_task_and_organ_and_what_was_published(svc: Svc) -> None:
    install(svc.platform, svc.principal("olga"), "visceral-anatomy3")
    results = {"CTce": _organs(0.9, 0.2), "MRT1": _organs(0.7, 0.8)}
    svc.scored_tasks("b1", "blue", "final", "visceral-anatomy3", results)
    assert svc.post("/submissions/b1/publish", "bob", {"task": "CTce", "part": "liver"})[0] == 200
    chosen = publications.choices(svc.platform, svc.principal("bob"), "b1")
    rows = {(p.task, p.part): p.published for p in chosen.publications}
    assert [key for key, published in rows.items() if published] == [("CTce", "liver")]
    for task in ("CTce", "MRT1"):
        assert {(task, None), (task, "liver"), (task, "spleen")} <= set(rows)
    assert chosen.final is False and chosen.final_entries >= 1
    with pytest.raises(NotFoundError):
        publications.choices(svc.platform, svc.principal("carol"), "b1")
