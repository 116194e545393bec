"""Which phase a board shows when none is named: the open one, else the last that closed.

A real challenge has a `development` phase open and a `final` one that opens next month:
`proctor leaderboard C` (and the web board without `?phase=`) showed `final`, empty, while
everyone submitted to `development`. Through the service, the REST route and the CLI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from service_seed import Seeded, seed, served
from toy_views import reinstall

from proctor.services.platform import standings
from proctor.services.platform.accounts import authenticate

PROCTOR = str(Path(sys.executable).with_name("proctor"))
NOW = datetime.now(UTC)


def _phase(name: str, opens: timedelta | None, closes: timedelta | None) -> dict[str, Any]:
    times = {"opens": opens, "closes": closes}
    return {
        "name": name,
        "tasks": ["arousal"],
        **{k: (NOW + v).isoformat() for k, v in times.items() if v is not None},
    }


def _shown(seeded: Seeded, root: Path, *phases: dict[str, Any]) -> str:
    reinstall(seeded, root, phases=list(phases))
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    return standings.leaderboard(seeded.platform, olga, "toy", None, "default").phase


@pytest.fixture
def seeded(tmp_path: Path) -> Seeded:
    return seed(tmp_path / "service")


def test_the_open_phase_is_shown_not_the_last_one_that_has_not_opened(
    seeded: Seeded, tmp_path: Path
) -> None:
    dev = _phase("development", -timedelta(days=10), timedelta(days=20))
    final = _phase("final", timedelta(days=30), timedelta(days=40))
    assert _shown(seeded, tmp_path / "a", dev, final) == "development"
    with served(seeded.app) as url:
        env = dict(os.environ, PROCTOR_SERVER=url, PROCTOR_TOKEN=seeded.tokens["alice"])
        done = subprocess.run([PROCTOR, "leaderboard", "toy"], env=env, capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("toy · phase development · board default")


def test_between_phases_the_last_closed_one_is_shown(seeded: Seeded, tmp_path: Path) -> None:
    early = _phase("early", -timedelta(days=30), -timedelta(days=20))
    dev = _phase("development", -timedelta(days=19), -timedelta(days=1))
    final = _phase("final", timedelta(days=3), None)
    assert _shown(seeded, tmp_path / "b", early, dev, final) == "development"


def test_before_any_phase_opens_the_first_to_open_is_shown(seeded: Seeded, tmp_path: Path) -> None:
    sooner = _phase("sooner", timedelta(days=2), timedelta(days=8))
    later = _phase("later", timedelta(days=9), None)
    assert _shown(seeded, tmp_path / "c", sooner, later) == "sooner"


def test_a_named_phase_is_still_shown_whatever_its_times(seeded: Seeded, tmp_path: Path) -> None:
    reinstall(
        seeded,
        tmp_path / "d",
        phases=[
            _phase("development", -timedelta(days=1), None),
            _phase("final", timedelta(days=3), None),
        ],
    )
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    assert standings.leaderboard(seeded.platform, olga, "toy", "final", "default").phase == "final"
