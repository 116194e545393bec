"""How the pages word numbers and outcomes, the bundle's own pages, the quota left, the heat map.

No browser here: ``test_web_views.py`` drives the pages in Chromium.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from service_seed import archive, seed
from toy_challenge import make_challenge, make_entry

from proctor.errors import ConfigError, NotFoundError
from proctor.resolve import load_challenge
from proctor.scoring.visceral import dashboard
from proctor.services.platform import installs, submissions
from proctor.services.platform.accounts import authenticate
from proctor.services.platform.allowances import team_allowances
from proctor.services.platform.quota import DAY_S, iso
from proctor.store.models import SubmissionRow
from proctor.web.pages.bundle_pages import render_page, sanitized
from proctor.web.pages.charts import dashboard_charts
from proctor.web.pages.figures import (
    Numbers,
    ShownInterval,
    case_summary,
    failure_banner,
    repeated_messages,
    score_grid,
    stage_outcome,
)


def toy(root: Path, **changes: Any) -> Path:
    """The toy challenge's folder with ``changes`` to its challenge.yaml."""
    bundle = make_challenge(root / "toy")
    spec = yaml.safe_load((bundle / "challenge.yaml").read_text())
    spec.update(changes)
    (bundle / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return bundle


def test_an_exam_whose_cases_all_failed_is_not_called_passed() -> None:
    exam = {"status": "passed", "cases": {"total": 8, "passed": 0, "failed": 8, "timed_out": 0}}
    assert stage_outcome(exam) == "all 8 cases failed"
    some = {"status": "passed", "cases": {"total": 8, "passed": 5, "failed": 3, "timed_out": 0}}
    assert stage_outcome(some) == "5 of 8 cases passed"
    assert stage_outcome({"status": "passed", "cases": {"total": 0}}) == "passed"
    assert stage_outcome({"status": "failed", "cases": {"total": 2, "passed": 0}}) == "failed"
    assert case_summary(exam["cases"]) == "0/8 passed, 8 failed"


def test_an_exam_whose_outcomes_are_not_disclosed_is_not_called_failed() -> None:
    """At disclosure ``none`` only the total is kept: no outcome may be read into it."""
    hidden = {"status": "passed", "cases": {"total": 3, "passed": 0, "failed": 0, "timed_out": 0}}
    assert stage_outcome(hidden) == "passed"
    assert case_summary(hidden["cases"]) == "3 cases (outcomes not disclosed)"


def test_counts_show_whole_and_precision_is_declared_per_metric(tmp_path: Path) -> None:
    challenge = load_challenge(toy(tmp_path, precision={"brier": 2}) / "challenge.yaml")
    numbers = Numbers(challenge)
    assert numbers.fmt("records", 8.0) == "8"
    assert numbers.fmt("brier", 0.123456) == "0.12"
    assert numbers.fmt("auroc", 0.5) == "0.5000"
    assert numbers.fmt("auroc", None) == "–"
    assert numbers.better("brier") == "lower is better"
    assert numbers.better("auroc") == "higher is better"
    assert numbers.better("records") == "a count"


@pytest.mark.parametrize(
    ("changes", "where"),
    [
        ({"precision": {"nonsense": 2}}, "precision.nonsense"),
        ({"precision": {"brier": 40}}, "precision.brier"),
        ({"pages": {"overview": "../../etc/passwd.md"}}, "pages.overview"),
        ({"pages": {"terms": "terms.pdf"}}, "pages.terms"),
    ],
)
def test_a_bad_precision_or_page_is_refused_naming_the_key(
    tmp_path: Path, changes: dict[str, Any], where: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(where)):
        load_challenge(toy(tmp_path, **changes) / "challenge.yaml")


def test_bundle_pages_are_rendered_sanitized(tmp_path: Path) -> None:
    bundle = toy(tmp_path, pages={"overview": "about.md", "data": "data.html"})
    (bundle / "about.md").write_text(
        "# About\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<script>alert(1)</script>\n\n"
        "[x](javascript:alert(2)) <img src=https://evil.example/i.png>\n"
    )
    challenge = load_challenge(bundle / "challenge.yaml")
    html = str(render_page(challenge, "overview"))
    assert "<h1>About</h1>" in html and "<td>1</td>" in html
    assert "<script" not in html and "alert(1)" not in html and "<img" not in html
    assert "href" not in html
    with pytest.raises(NotFoundError, match="missing from the installed bundle"):
        render_page(challenge, "data")
    with pytest.raises(NotFoundError, match="has no page 'terms'"):
        render_page(challenge, "terms")
    assert (
        str(sanitized("<p onclick='x()' style='color:red'>hi</p>", markdown=False)) == "<p>hi</p>"
    )


def test_the_quota_left_follows_the_phase_rules(tmp_path: Path) -> None:
    seeded = seed(tmp_path / "service")
    olga = authenticate(seeded.platform, seeded.tokens["olga"])
    phases = [{"name": "final", "tasks": ["arousal"], "quota": {"per_day": 2, "total": 3}}]
    installs.install(seeded.platform, olga, str(toy(tmp_path / "v2", phases=phases)))
    alice = authenticate(seeded.platform, seeded.tokens["alice"])
    (left,) = team_allowances(seeded.platform, alice, "toy")
    assert (left.used_today, left.per_day, left.used, left.total, left.next_at) == (
        0,
        2,
        0,
        3,
        None,
    )
    entry = archive(make_entry(tmp_path / "entry"))
    for _ in range(2):
        submissions.submit(seeded.platform, alice, "toy", None, io.BytesIO(entry))
    (left,) = team_allowances(seeded.platform, alice, "toy")
    with seeded.platform.db() as session:
        first = min(row.created for row in session.query(SubmissionRow))
    assert (left.used_today, left.used, left.active, left.exhausted) == (2, 2, 2, False)
    assert left.next_at == iso(first + DAY_S)
    bob = authenticate(seeded.platform, seeded.tokens["bob"])
    assert team_allowances(seeded.platform, bob, "toy")[0].used_today == 0
    assert team_allowances(seeded.platform, olga, "toy") == []  # no team
    seeded.platform.close()


def test_visceral_dashboard_becomes_a_heat_map_with_its_numbers() -> None:
    rows = {
        ("DICE", "liver"): (0, [0.91, 0.85]),
        ("DICE", "spleen"): (1, [0.7]),
        ("AVD", "liver"): (0, [1.5, 2.5]),
        ("AVD", "spleen"): (1, []),
    }
    report = {"dashboard": {"segmentation": dashboard(rows)}}
    (chart,) = dashboard_charts(report, Numbers(None))
    svg = str(chart.svg)
    assert svg.count("<rect") == 4 and 'role="img"' in svg
    assert chart.header == ("part", "DICE", "AVD")
    assert chart.rows == [("liver", "0.8800", "2.0000"), ("spleen", "0.7000", "–")]
    assert dashboard_charts({"scores": {}}, Numbers(None)) == []


def test_a_rescore_shows_changes_at_the_metrics_precision_unless_that_hides_them(
    tmp_path: Path,
) -> None:
    numbers = Numbers(load_challenge(toy(tmp_path, precision={"brier": 2}) / "challenge.yaml"))
    assert numbers.change("auroc", 1.0, 0.8333333333333333) == ("1.0000", "0.8333")
    assert numbers.change("brier", 0.211, 0.2149) == ("0.211", "0.2149")
    assert numbers.change("records", 8.0, 8.0) == ("8", "8")


def test_one_case_is_singular_and_outcomes_count_right() -> None:
    one = {"status": "passed", "cases": {"total": 1, "passed": 0, "failed": 1, "timed_out": 0}}
    assert stage_outcome(one) == "its one case failed"
    assert case_summary(one["cases"]) == "0/1 passed, 1 failed"
    hidden = {"total": 1, "passed": 0, "failed": 0, "timed_out": 0}
    assert case_summary(hidden) == "1 case (outcomes not disclosed)"


@pytest.mark.parametrize(
    ("failure", "owner"),
    [
        ("entry", "your entry"),
        ("scorer", "the organizers' scoring program"),
        ("platform", "the platform"),
        ("infrastructure", "the platform"),
    ],
)
def test_the_banner_leads_with_the_failures_line_and_its_owner(failure: str, owner: str) -> None:
    message = (
        "entry exited with status 1\n--- stderr (last 2000 characters) ---\n"
        'Traceback (most recent call last):\n  File "model.py", line 180\n'
        "    def fit(self\n           ^\nSyntaxError: '(' was never closed"
    )
    report = {
        "status": "failed",
        "message": "quiz failed",
        "failed_stage": "quiz",
        "stages": [{"name": "prep", "status": "passed", "message": "ok"},
                   {"name": "quiz", "status": "failed", "message": message}],
    }  # fmt: skip
    shown = failure_banner(report, failure)
    assert shown is not None
    assert shown.owner == owner
    assert shown.line == "SyntaxError: '(' was never closed"
    assert shown.stage == "quiz"
    plain = {**report, "stages": [{"name": "quiz", "status": "failed", "message": "no output"}]}
    assert failure_banner(plain, failure).line == "no output"  # type: ignore[union-attr]
    assert failure_banner({"status": "scored", "stages": []}, None) is None


def test_a_failure_repeated_on_several_tasks_is_shown_once_with_the_tasks() -> None:
    same = "Traceback ...\nValueError: bad shape"
    stages = [
        {"name": "pu:quiz", "status": "failed", "message": same},
        {"name": "ssl:quiz", "status": "failed", "message": same},
        {"name": "noisy:quiz", "status": "failed", "message": "other"},
        {"name": "noisy:prep", "status": "passed", "message": ""},
    ]
    assert repeated_messages(stages) == {
        "pu:quiz": ["pu:quiz", "ssl:quiz"],
        "noisy:quiz": ["noisy:quiz"],
    }


def test_scores_become_a_metric_by_task_grid_with_intervals_beside_their_metric() -> None:
    scores = {
        "pu": {"auc": 0.9, "auc_ci95_low": 0.85, "auc_ci95_high": 0.95, "datasets": 3},
        "ssl": {"auc": 0.8},
        "noisy": {"auc": 0.839, "auc_ci95_low": 0.839, "auc_ci95_high": 0.839, "datasets": 3},
    }
    tasks, rows = score_grid(scores, {"pu": "datasets", "noisy": "datasets"})
    assert tasks == ["pu", "ssl", "noisy"]
    assert [row.metric for row in rows] == ["auc", "datasets"]
    assert rows[0].values == (0.9, 0.8, 0.839)
    # with its number of cases; an interval without width is no interval
    assert rows[0].intervals == (ShownInterval(0.85, 0.95, 3), None, None)
    assert rows[1].values == (3, None, 3)
