"""Small things an organizer and a participant met on the service (issue 16, item 8).

Organizers test-submit (their submissions go to a hidden team that only the ``all`` board
shows), ``flagged`` says when nothing is flagged, scores are rounded for people (JSON keeps
every digit), and a refusal for want of an open phase names the phases and their times.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from service_seed import Seeded, run_queued, seed, served
from toy_challenge import make_challenge, make_exam_entry
from typer.testing import CliRunner

from proctor.cli.main import build_app
from proctor.errors import RefusedError
from proctor.resolve import load_challenge
from proctor.sandbox.bwrap import BwrapSandbox
from proctor.services.platform.submissions import choose_phase
from proctor.settings import Settings

# hidden records get scores that rank imperfectly: AUPRC is no round number
UNEVEN = """  te*) i=0; : > "$1.vec"
    while [ $i -lt 40 ]; do echo "0.$(( (i * 37) % 89 + 10 ))" >> "$1.vec"; i=$((i + 1)); done ;;"""


@pytest.fixture
def served_platform(
    shared_dir: Path, sandbox: BwrapSandbox, sandbox_settings: Settings
) -> Iterator[tuple[Seeded, str, dict[str, str]]]:
    """alice (team amber) and olga (an organizer in no team) each submit; both are scored."""
    seeded = seed(shared_dir / "service")
    entry = make_exam_entry(shared_dir / "entry", UNEVEN)
    with served(seeded.app) as url:
        ids = {user: cli(seeded, url, user, "submit", str(entry), "-c", "toy", "--no-wait",
                         "--json") for user in ("alice", "olga")}  # fmt: skip
        run_queued(seeded, sandbox, sandbox_settings)
        yield seeded, url, {user: json.loads(out)["submission"] for user, out in ids.items()}
    seeded.platform.close()


def cli(seeded: Seeded, url: str, user: str | None, *args: str) -> str:
    token = ["--token", seeded.tokens[user]] if user else []
    result = CliRunner().invoke(build_app(), [*args, "--server", url, *token])
    assert result.exit_code == 0, result.stdout
    return result.stdout


@pytest.mark.sandbox
def test_an_organizer_test_submits_and_only_the_all_board_ranks_it(
    served_platform: tuple[Seeded, str, dict[str, str]],
) -> None:
    seeded, url, ids = served_platform
    mine = json.loads(cli(seeded, url, "olga", "status", ids["olga"], "--json"))
    assert mine["status"] == "scored" and mine["team"] == "organizers"
    public = json.loads(cli(seeded, url, None, "leaderboard", "toy", "--json"))
    assert [row["submission"] for row in public["rows"]] == [ids["alice"]]
    as_organizer = json.loads(cli(seeded, url, "olga", "leaderboard", "toy", "--json"))
    assert [row["submission"] for row in as_organizer["rows"]] == [ids["alice"]]
    every = json.loads(cli(seeded, url, "olga", "leaderboard", "toy", "--board", "all", "--json"))
    assert {row["submission"] for row in every["rows"]} == {ids["alice"], ids["olga"]}
    assert cli(seeded, url, "olga", "leaderboard", "toy", "--board", "all").count("organizers")


@pytest.mark.sandbox
def test_scores_are_rounded_for_people_and_whole_in_json(
    served_platform: tuple[Seeded, str, dict[str, str]],
) -> None:
    seeded, url, ids = served_platform
    whole = json.loads(cli(seeded, url, "alice", "status", ids["alice"], "--json"))
    auprc = whole["report"]["scores"]["arousal"]["auprc"]
    assert len(repr(auprc)) > 10, "the toy entry must score an uneven AUPRC"
    shown = cli(seeded, url, "alice", "status", ids["alice"])
    assert f"auprc={auprc:.6f}" in shown
    assert not re.search(r"=\d+\.\d{7,}", shown), shown


@pytest.mark.sandbox
def test_flagged_says_so_when_nothing_is_flagged(
    served_platform: tuple[Seeded, str, dict[str, str]],
) -> None:
    seeded, url, _ = served_platform
    assert cli(seeded, url, "olga", "flagged").strip() == "no submission is flagged"


def test_a_challenge_with_no_open_phase_names_each_phase_and_when_it_opens(
    tmp_path: Path,
) -> None:
    now = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
    challenge = load_challenge(make_challenge(tmp_path / "toy"))
    final = challenge.phases[0]
    early = final.model_copy(update={"name": "early", "closes": now - timedelta(days=2),
                                     "opens": now - timedelta(days=9)})  # fmt: skip
    later = final.model_copy(update={"opens": now + timedelta(days=3)})
    closed = challenge.model_copy(update={"phases": (early, later)})
    with pytest.raises(RefusedError) as refused:
        choose_phase(closed, None, now.timestamp())
    message = str(refused.value)
    assert "phase 'final' opens at 2026-11-28T12:00:00+00:00" in message
    assert "phase 'early' closed at 2026-11-23T12:00:00+00:00" in message
