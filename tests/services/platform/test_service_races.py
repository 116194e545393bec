"""The service's rules hold under real concurrency, on SQLite and on PostgreSQL.

Each rule that reads and then writes (a phase's quota, a one-use invitation, a team's size, a
phase's ``final_entries``) is raced by many threads at once, each through the real service on
its own connection, released together by a barrier. The database must end holding only what
the rule allows. Two ``proctor user add`` processes on a fresh data folder (or database) race
the first migration.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from service_boards_fixtures import Svc, start, toy_bundle
from service_seed import archive
from sqlalchemy import func, select
from toy_challenge import make_entry

from proctor.errors import NotFoundError, RefusedError
from proctor.services.platform import answers, publications, submissions, teams
from proctor.services.platform.accounts import add_user
from proctor.services.platform.installs import install
from proctor.services.platform.resources import Platform, open_platform
from proctor.settings import ServiceSettings
from proctor.store.models import FinalChoice, Invite, Membership, SubmissionRow, Team, User

THREADS = 12


def _race(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run each call in a thread of its own, released at once; each outcome or error raised."""
    barrier = threading.Barrier(len(calls))
    outcomes: list[Any] = [None] * len(calls)

    def one(index: int) -> None:
        barrier.wait()
        try:
            outcomes[index] = calls[index]()
        except Exception as err:
            outcomes[index] = err

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


@pytest.fixture
def svc(database_url: str, tmp_path: Path) -> Iterator[Svc]:
    service = start(database_url, tmp_path)
    yield service
    service.client.close()
    Platform.close(service.platform)


def _quota_bundle(root: Path) -> Path:
    """The toy challenge with a phase ``capped`` of ``quota: {total: 2}``."""
    folder = toy_bundle(root)
    path = folder / "challenge.yaml"
    spec = yaml.safe_load(path.read_text())
    spec["phases"].append({"name": "capped", "tasks": ["arousal"], "quota": {"total": 2}})
    path.write_text(yaml.safe_dump(spec))
    return folder


def test_parallel_submissions_never_pass_the_quota(svc: Svc, tmp_path: Path) -> None:
    install(svc.platform, svc.principal("olga"), str(_quota_bundle(tmp_path / "capped")))
    upload = archive(make_entry(tmp_path / "entry"))
    bob = svc.principal("bob")

    def send() -> str:
        stream = io.BytesIO(upload)
        return submissions.submit(svc.platform, bob, "toy", "capped", stream).submission

    outcomes = _race([send] * THREADS)
    accepted = [o for o in outcomes if isinstance(o, str)]
    refused = [o for o in outcomes if isinstance(o, RefusedError)]
    assert len(accepted) == 2 and len(refused) == THREADS - 2, outcomes
    assert all("used all 2 submissions" in str(r) for r in refused)
    with svc.platform.db() as session:
        stored = session.scalar(select(func.count()).where(SubmissionRow.phase == "capped"))
    assert stored == 2


def test_one_invitation_admits_one_user(svc: Svc) -> None:
    code = teams.invite(svc.platform, svc.principal("bob")).code
    joiners = [f"joiner{i}" for i in range(THREADS)]
    for name in joiners:
        svc.tokens[name] = add_user(svc.platform, name).token
    principals = [svc.principal(name) for name in joiners]

    outcomes = _race([partial(teams.join, svc.platform, p, code) for p in principals])
    joined = [o for o in outcomes if isinstance(o, answers.Joined)]
    assert len(joined) == 1, outcomes
    assert all(isinstance(o, NotFoundError) for o in outcomes if o not in joined)
    assert _members(svc, "blue") == 2


def test_a_team_never_grows_past_its_size(svc: Svc) -> None:
    """A new team has 1 member and the size is 5: of many invitees joining at once, 4 get in."""
    count = 2 * THREADS
    for round_ in range(3):
        team = f"team{round_}"
        owner = f"owner{round_}"
        svc.tokens[owner] = add_user(svc.platform, owner, team=team).token
        codes = [teams.invite(svc.platform, svc.principal(owner)).code for _ in range(count)]
        joiners = [f"joiner{round_}-{i}" for i in range(count)]
        for name in joiners:
            svc.tokens[name] = add_user(svc.platform, name).token
        principals = [svc.principal(name) for name in joiners]

        joins = zip(principals, codes, strict=True)
        outcomes = _race([partial(teams.join, svc.platform, p, c) for p, c in joins])
        joined = [o for o in outcomes if isinstance(o, answers.Joined)]
        assert len(joined) == 4, f"round {round_}: {outcomes}"
        refused = [o for o in outcomes if not isinstance(o, answers.Joined)]
        assert all("already has 5 members" in str(o) for o in refused), refused
        assert _members(svc, team) == 5
    with svc.platform.db() as session:
        used = session.scalar(select(func.count()).where(Invite.used_by.is_not(None)))
    assert used == 3 * 4  # a refused join leaves its invitation unused


def _members(svc: Svc, team: str) -> int:
    with svc.platform.db() as session:
        team_id = session.scalar(select(Team.id).where(Team.name == team))
        return int(session.scalar(select(func.count()).where(Membership.team_id == team_id)) or 0)


def test_parallel_final_choices_keep_final_entries(svc: Svc) -> None:
    """Phase ``open`` keeps 1 final entry: choosing several submissions at once keeps one."""
    bob = svc.principal("bob")
    for round_ in range(3):
        sids = [
            svc.scored(f"s{round_}-{i}", "blue", "open", {"auprc": 0.5}) for i in range(THREADS)
        ]
        outcomes = _race([partial(publications.choose_final, svc.platform, bob, s) for s in sids])
        assert all(isinstance(o, answers.FinalChoice) and o.final for o in outcomes), outcomes
        with svc.platform.db() as session:
            kept = list(session.scalars(select(FinalChoice.submission_id)))
        assert len(kept) == 1, f"round {round_}: {kept}"


PROCTOR_WAITING = """
import sys, time
from pathlib import Path
from proctor.cli.main import build_app
go = Path(sys.argv[1])
while not go.exists():
    time.sleep(0.005)
build_app()(sys.argv[2:])
"""


def test_two_user_adds_on_a_fresh_database_both_migrate_it(
    database_url: str, tmp_path: Path
) -> None:
    """Each process imports everything, then all start ``user add`` on the same moment."""
    data = tmp_path / "data"
    env = dict(os.environ)
    if not database_url.startswith("sqlite"):
        env["PROCTOR_DATABASE_URL"] = database_url
    go = tmp_path / "go"
    names = [f"user{i}" for i in range(4)]
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                PROCTOR_WAITING,
                str(go),
                "user",
                "add",
                name,
                "--data",
                str(data),
                "--json",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    go.touch()
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        assert '"token"' in out
    settings = ServiceSettings(data=data, database_url=env.get("PROCTOR_DATABASE_URL"))
    platform = open_platform(settings)
    try:
        with platform.db() as session:
            assert sorted(session.scalars(select(User.name))) == names
    finally:
        platform.close()


def test_users_added_at_once_to_a_new_team_fill_it_and_no_more(svc: Svc) -> None:
    """The first creates the team, the others join it; a name taken twice is refused once."""
    adds = [partial(add_user, svc.platform, f"newcomer{i}", team="fresh") for i in range(7)]
    adds += [partial(add_user, svc.platform, "twin") for _ in range(3)]
    outcomes = _race(adds)
    errors = [str(o) for o in outcomes if isinstance(o, Exception)]
    assert sorted(errors) == sorted(
        ["team 'fresh' already has 5 members, the most a team may have"] * 2
        + ["user 'twin' exists already: choose another name"] * 2
    ), errors
    assert _members(svc, "fresh") == 5
