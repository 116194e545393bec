"""Every route of the schema, as every role, on a scored submission with a hidden exam.

Team ``amber`` (alice) has a submission of the toy challenge evaluated by the real job
function in the real sandbox: its exam ran on hidden records whose logs, case names and
per-case values stay with the organizers, and its references stay on the server. The walk
(``route_walk``) calls every route of ``/openapi.json`` as anonymous, bob of team ``blue``,
alice and the organizer, and checks statuses and that nothing forbidden is in any answer.
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import route_walk
from route_walk import ACCESS, Target, walk
from service_seed import Seeded, clients, run_queued, seed, served, submit
from sqlalchemy import select
from toy_challenge import HIDDEN, SECRET, make_exam_entry

from proctor.sandbox.bwrap import BwrapSandbox
from proctor.settings import Settings
from proctor.store.models import CaseResult, Result

pytestmark = pytest.mark.sandbox

EXAM_LOG = "EXAM-LOG-7c1f"
SETUP_LOG = "SETUP-LOG-93ab"
HIDDEN_CASES = (
    f"""  te*) echo "{EXAM_LOG} $1 $(cat ../refs/NOTE.txt 2>&1)" >&2; exec ./good.sh "$1" ;;"""
)


@pytest.fixture
def scored(shared_dir: Path, sandbox: BwrapSandbox, sandbox_settings: Settings) -> Iterator[Seeded]:
    seeded = seed(shared_dir / "service")
    entry = make_exam_entry(shared_dir / "entry", HIDDEN_CASES)
    (entry / "setup.sh").write_text(f"#!/bin/sh\necho {SETUP_LOG}\n")
    submit(seeded, "alice", entry)
    run_queued(seeded, sandbox, sandbox_settings)
    yield seeded
    seeded.platform.close()


@pytest.fixture
def http(scored: Seeded) -> Iterator[dict[str, httpx.Client]]:
    with served(scored.app) as url:
        found = clients(scored, url)
        yield found
        for client in found.values():
            client.close()


def _forbidden(seeded: Seeded, member_view: str) -> dict[str, list[str]]:
    """What each role must never read; ``member_view``: alice's own answer (for the others)."""
    references = [SECRET, str(seeded.challenge_root), "-arousal.mat", "refs/"]
    hidden = [EXAM_LOG, *HIDDEN]
    private = [SETUP_LOG, member_view]
    return {
        "anonymous": references + hidden + private,
        "other": references + hidden + private,
        "member": references + hidden,
        # the console's record shows the entry's own stderr, which names ../refs/NOTE.txt
        # it tried to read: the path it wrote, not the server's; the reference stays unread
        "organizer": [r for r in references if r != "refs/"],
    }


def test_no_route_shows_another_teams_results_hidden_logs_or_references(
    scored: Seeded, http: dict[str, httpx.Client]
) -> None:
    sid = scored.submissions[0]
    mine = http["member"].get(f"/api/v1/submissions/{sid}")
    assert mine.status_code == 200 and mine.json()["status"] == "scored", mine.text
    with scored.platform.db() as session:
        stored = session.scalars(select(CaseResult.case)).all()
        result = session.scalars(select(Result)).one()
    assert set(HIDDEN) <= set(stored)  # the per-case values exist, for the organizers
    assert EXAM_LOG in _organizer_logs(scored, result)  # and so do the exam's logs
    stages = mine.json()["report"]["stages"]
    target = Target("toy", sid, "arousal", _forbidden(scored, stages[1]["message"]))
    calls = walk(http, target)
    assert calls == len(ACCESS) * 4


def _organizer_logs(seeded: Seeded, result: Result) -> str:
    """Every text file of the run's stored logs artifact, joined."""
    assert result.run_artifact is not None
    path = seeded.platform.artifacts.path(result.run_artifact)
    with tarfile.open(path) as tar:
        files = [tar.extractfile(m) for m in tar.getmembers() if m.isfile()]
        return "".join(f.read().decode(errors="replace") for f in files if f is not None)


def test_a_route_that_leaks_a_reference_fails_the_walk(
    scored: Seeded, http: dict[str, httpx.Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    @scored.app.get("/api/v1/challenges/{name}/leak")
    def leak(name: str) -> dict[str, str]:
        return {"note": (scored.challenge_root / "refs" / "NOTE.txt").read_text()}

    scored.app.openapi_schema = None
    monkeypatch.setitem(route_walk.ACCESS, "GET /api/v1/challenges/{name}/leak", "public")
    target = Target("toy", scored.submissions[0], "arousal", _forbidden(scored, "no such text"))
    with pytest.raises(AssertionError, match=SECRET):
        walk(http, target)


def test_a_route_missing_from_the_table_fails_the_walk(
    scored: Seeded, http: dict[str, httpx.Client]
) -> None:
    @scored.app.get("/api/v1/unclassified")
    def unclassified() -> dict[str, str]:
        return {}

    scored.app.openapi_schema = None
    target = Target("toy", scored.submissions[0], "arousal", {})
    with pytest.raises(AssertionError, match="GET /api/v1/unclassified"):
        walk(http, target)
