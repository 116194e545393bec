"""A new scorer is one module outside Proctor, declared as a ``proctor.scorers`` entry point.

Nothing in ``proctor`` changes and nothing registers at run time: the plug-in's distribution
names its :class:`Scorer` (``toy_scorer.SCORER``: declaration, score function, output check)
or its :class:`ScorerKind` (``toy_scorer.KIND``: settings model and factory). A challenge
naming it loads, scores and ranks by its ``wrong`` metric, lower first.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from plugin_install import install_plugin, run_with_plugin
from table_challenge import DEV, TEST, make_table_challenge, write_prediction
from toy_scorer import KIND, SCORER

from proctor.errors import ConfigError
from proctor.resolve import load_challenge
from proctor.scoring import physionet2018
from proctor.scoring.registry import (
    BUILTIN_SCORERS,
    PLUGIN_GROUP,
    scorer_for,
    scorer_kinds,
    scorers,
)
from proctor.services.local.demo import demo_leaderboard
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings
from proctor.types import Direction, RunStatus

ENTRIES = ("exact_rows = toy_scorer:SCORER", "exact_column = toy_scorer:KIND")
TWO_WRONG = {**TEST, "t1": "dog", "t2": "cat"}
SCORERS = pytest.mark.parametrize("scorer", ["exact_rows", {"exact_column": "target"}])


@pytest.fixture
def scorer_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(tmp_path / "site", monkeypatch, PLUGIN_GROUP, *ENTRIES)


def write_challenge(root: Path, scorer: object) -> Path:
    """The table challenge's data, scored by ``scorer`` and ranked by its ``wrong`` metric."""
    make_table_challenge(root)
    spec = yaml.safe_load((root / "challenge.yaml").read_text())
    spec["tasks"][0]["scorer"] = scorer
    spec["leaderboard"] = {"metric": "wrong"}
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return root


@SCORERS
def test_the_plugged_in_scorer_declares_its_metrics_with_their_directions(
    tmp_path: Path, scorer_plugin: None, scorer: object
) -> None:
    challenge = load_challenge(write_challenge(tmp_path / "c", scorer))
    task = challenge.task("main")
    assert task.scorer_declaration.metric("wrong").direction is Direction.LOWER
    assert task.reported_metrics == ("wrong", "rows")
    assert challenge.leaderboard_direction() is Direction.LOWER
    assert challenge.digits("rows") is None  # a count


def test_the_plugged_in_scorers_are_in_the_table(scorer_plugin: None) -> None:
    assert scorers()["exact_rows"] is SCORER
    assert scorer_kinds()["exact_column"] is KIND
    assert scorer_for("exact_rows") is SCORER


def test_the_plugged_in_kind_s_block_errors_are_located(
    tmp_path: Path, scorer_plugin: None
) -> None:
    folder = write_challenge(tmp_path / "c", {"exact_column": "target", "colour": "red"})
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.scorer\.colour: unknown key"):
        load_challenge(folder)


@pytest.mark.sandbox
@pytest.mark.slow
@SCORERS
def test_the_plugged_in_scorer_scores_and_ranks_entries_end_to_end(
    shared_dir: Path, scorer_plugin: None, scorer: object
) -> None:
    folder = write_challenge(shared_dir / "challenge", scorer)
    settings = Settings(work_root=shared_dir)
    reports = []
    for name, test in (("two-wrong", TWO_WRONG), ("perfect", TEST)):
        entry = write_prediction(shared_dir / name, DEV, test)
        report = run_entry(RunRequest(entry, str(folder), jobs=1), settings)
        assert report.status is RunStatus.SCORED, report.to_json()
        reports.append((name, report))
    assert reports[0][1].scores["main"] == {"wrong": pytest.approx(2 / 6), "rows": 6.0}
    assert reports[1][1].scores["main"]["wrong"] == 0.0
    standings = demo_leaderboard(load_challenge(folder), reports)
    assert [row.entry for row in standings] == ["perfect", "two-wrong"]


@pytest.mark.sandbox
@pytest.mark.slow
def test_proctor_run_finds_an_installed_scorer(
    tmp_path: Path, shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    install_plugin(site, monkeypatch, PLUGIN_GROUP, *ENTRIES)
    challenge = write_challenge(shared_dir / "challenge", "exact_rows")
    entry = write_prediction(shared_dir / "entry", DEV, TWO_WRONG)
    report = run_with_plugin(site, entry, challenge, shared_dir)
    assert report["scores"]["main"]["wrong"] == pytest.approx(2 / 6)


def test_without_its_plugin_the_scorer_is_refused_at_load(tmp_path: Path) -> None:
    folder = write_challenge(tmp_path / "c", "exact_rows")
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.scorer: unknown scorer 'exact_rows'"):
        load_challenge(folder)
    assert "exact_rows" not in scorers()


def test_a_plugin_cannot_replace_a_builtin_scorer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path / "site", monkeypatch, PLUGIN_GROUP, "physionet2018 = toy_scorer:X")
    assert scorers()["physionet2018"] is physionet2018.SCORER
    assert list(scorers().values()) == list(BUILTIN_SCORERS)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("exact = toy_scorer:SCORER", r"names a scorer called 'exact_rows': name it alike"),
        ("exact = toy_scorer:KIND", r"names a scorer kind 'exact_column': name it alike"),
        ("exact_rows = toy_scorer:METRICS", r"must name a Scorer or a ScorerKind"),
        ("exact_rows = no_such_scorer_module:S", r"does not load: No module named"),
    ],
)
def test_a_broken_plugin_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str, message: str
) -> None:
    install_plugin(tmp_path / "site", monkeypatch, PLUGIN_GROUP, entry)
    folder = write_challenge(tmp_path / "c", "physionet2018")
    with pytest.raises(ConfigError, match=rf"entry point .*{PLUGIN_GROUP!r}.*{message}"):
        load_challenge(folder)
