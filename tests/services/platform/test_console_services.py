"""The console's use cases on SQLite and PostgreSQL (migration 0008 on both).

A phase's times changed by an organizer are the ones every reader sees (``installs.current``:
the phase check of a submission, the overview), a team's quota override is applied by the
quota check (other teams keep the phase's), a disabled user's token is refused, and the list
of a challenge's submissions carries their scores, page by page.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from service_boards_fixtures import Svc, start
from sqlalchemy import select

from proctor.errors import AuthenticationError, NotFoundError, RefusedError, UsageError
from proctor.services.platform import overview, phase_overrides, users_admin
from proctor.services.platform.accounts import authenticate
from proctor.services.platform.installs import current, install
from proctor.services.platform.phase_times import check_open
from proctor.services.platform.quota import check_quota
from proctor.services.platform.resources import Platform
from proctor.services.platform.submissions_list import Filters, challenge_submissions
from proctor.store.models import Team


@pytest.fixture
def svc(database_url: str, tmp_path: Path) -> Iterator[Svc]:
    service = start(database_url, tmp_path)
    yield service
    service.client.close()
    Platform.close(service.platform)


def test_a_phase_closed_early_is_closed_for_every_reader_and_survives_a_reinstall(
    svc: Svc,
) -> None:
    olga = svc.principal("olga")
    closed = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
    phase_overrides.set_phase_times(svc.platform, olga, "toy", "open", closes=closed)
    phase = current(svc.platform, "toy")[1].phase("open")
    assert phase.closes == closed
    with pytest.raises(RefusedError, match="closed at"):
        check_open(phase, time.time())
    shown = overview.challenge_overview(svc.platform, olga, "toy")
    [shown_phase] = [p for p in shown.phases if p.name == "open"]
    assert shown_phase.closes is not None and not shown_phase.open
    spec = yaml.safe_load((svc.bundle / "challenge.yaml").read_text())
    spec["title"] = "Toy, second edition"
    (svc.bundle / "challenge.yaml").write_text(yaml.safe_dump(spec))
    assert install(svc.platform, olga, str(svc.bundle)).version == 2
    assert current(svc.platform, "toy")[1].phase("open").closes == closed
    with pytest.raises(NotFoundError):
        phase_overrides.set_phase_times(svc.platform, svc.principal("bob"), "toy", "open")
    with pytest.raises(NotFoundError, match="phases: check"):
        phase_overrides.set_phase_times(svc.platform, olga, "toy", "nope")
    with pytest.raises(UsageError, match="before it opens"):
        phase_overrides.set_phase_times(
            svc.platform, olga, "toy", "open", opens=closed + timedelta(days=1)
        )


def test_a_teams_quota_override_is_applied_by_the_quota_check(svc: Svc) -> None:
    svc.scored("s1", "blue", "open", {"auprc": 0.5})
    svc.scored("s2", "red", "open", {"auprc": 0.6})
    olga = svc.principal("olga")
    users_admin.set_quota(svc.platform, olga, "blue", {"total": 1})
    phase = current(svc.platform, "toy")[1].phase("open")
    with svc.platform.db() as session:
        teams = {name: id_ for name, id_ in session.execute(select(Team.name, Team.id))}
        with pytest.raises(RefusedError, match="all 1 submissions"):
            check_quota(session, phase, teams["blue"], "toy", time.time())
        check_quota(session, phase, teams["red"], "toy", time.time())
    users_admin.set_quota(svc.platform, olga, "blue", {"total": None})
    with svc.platform.db() as session:
        check_quota(session, phase, teams["blue"], "toy", time.time())
    with pytest.raises(UsageError, match="above 0"):
        users_admin.set_quota(svc.platform, olga, "blue", {"per_day": 0})


def test_a_disabled_users_token_is_refused(svc: Svc) -> None:
    users_admin.disable(svc.platform, svc.principal("olga"), "carol")
    with pytest.raises(AuthenticationError, match="disabled"):
        authenticate(svc.platform, svc.tokens["carol"])
    listed = users_admin.users_and_teams(svc.platform, svc.principal("olga"))
    assert {u.user: u.disabled for u in listed.users}["carol"] is True


def test_the_list_pages_every_submission_with_its_scores(svc: Svc) -> None:
    for index in range(5):
        svc.scored(f"s{index}", "blue" if index % 2 else "red", "open", {"auprc": index / 10})
    olga = svc.principal("olga")
    first = challenge_submissions(svc.platform, olga, "toy", Filters(per_page=2))
    third = challenge_submissions(svc.platform, olga, "toy", Filters(page=3, per_page=2))
    assert first.total == 5 and [s.submission for s in first.submissions] == ["s4", "s3"]
    assert [s.scores for s in third.submissions] == [{"arousal": {"auprc": 0.0}}]
    blue = challenge_submissions(svc.platform, olga, "toy", Filters(team="blue"))
    assert {s.submission for s in blue.submissions} == {"s1", "s3"}
    with pytest.raises(NotFoundError):
        challenge_submissions(svc.platform, svc.principal("bob"), "toy", Filters())
