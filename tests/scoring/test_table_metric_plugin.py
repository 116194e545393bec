"""A new table metric is one module outside Proctor, declared as an entry point.

Nothing in ``proctor`` changes and nothing registers at run time: the plug-in's distribution
names its :class:`TableMetric` (``toy_table_metric.HAMMING_LOSS``), which carries its name,
function, kind, direction and summary. A ``scorer: {table: {metric: hamming_loss}}`` challenge
then loads, scores and ranks by it, lower first.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_install import install_plugin, run_with_plugin
from table_challenge import DEV, TEST, make_table_challenge, write_prediction
from toy_table_metric import HAMMING_LOSS

from proctor.errors import ConfigError
from proctor.resolve import load_challenge
from proctor.scoring.table_metrics import (
    BUILTIN_TABLE_METRICS,
    PLUGIN_GROUP,
    table_metrics,
)
from proctor.services.local.demo import demo_leaderboard
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.services.local.table import score_table_files
from proctor.settings import Settings
from proctor.types import Direction, RunStatus

ENTRY = "hamming_loss = toy_table_metric:HAMMING_LOSS"
TWO_WRONG = {**TEST, "t1": "dog", "t2": "cat"}


@pytest.fixture
def hamming_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(tmp_path / "site", monkeypatch, PLUGIN_GROUP, ENTRY)


def test_the_plugged_in_metric_is_in_the_catalog_and_scores_files(
    tmp_path: Path, hamming_plugin: None
) -> None:
    assert table_metrics()["hamming_loss"] is HAMMING_LOSS
    solution = tmp_path / "solution.csv"
    prediction = tmp_path / "submission.csv"
    solution.write_text("id,target\n" + "".join(f"{k},{v}\n" for k, v in TEST.items()))
    prediction.write_text("id,target\n" + "".join(f"{k},{v}\n" for k, v in TWO_WRONG.items()))
    found = score_table_files(solution, prediction, "hamming_loss")
    assert found.value == pytest.approx(2 / 6)
    assert found.rows == len(TEST)


def test_a_challenge_declares_the_plugged_in_metric_with_its_direction(
    tmp_path: Path, hamming_plugin: None
) -> None:
    challenge = load_challenge(make_table_challenge(tmp_path / "c", metric="hamming_loss"))
    declared = challenge.task("main").scorer_declaration.metric("hamming_loss")
    assert declared.direction is Direction.LOWER
    assert declared.summary == "share of wrong labels"
    assert challenge.leaderboard_direction() is Direction.LOWER


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_plugged_in_metric_scores_and_ranks_entries_end_to_end(
    tmp_path: Path, shared_dir: Path, hamming_plugin: None
) -> None:
    folder = make_table_challenge(shared_dir / "challenge", metric="hamming_loss")
    settings = Settings(work_root=shared_dir)
    reports = []
    for name, test in (("two-wrong", TWO_WRONG), ("perfect", TEST)):
        entry = write_prediction(shared_dir / name, DEV, test)
        report = run_entry(RunRequest(entry, str(folder), jobs=1), settings)
        assert report.status is RunStatus.SCORED, report.to_json()
        reports.append((name, report))
    assert reports[0][1].scores["main"]["hamming_loss"] == pytest.approx(2 / 6)
    assert reports[1][1].scores["main"]["hamming_loss"] == 0.0
    standings = demo_leaderboard(load_challenge(folder), reports)
    assert [row.entry for row in standings] == ["perfect", "two-wrong"]


@pytest.mark.sandbox
@pytest.mark.slow
def test_proctor_run_finds_an_installed_table_metric(
    tmp_path: Path, shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    install_plugin(site, monkeypatch, PLUGIN_GROUP, ENTRY)
    challenge = make_table_challenge(shared_dir / "challenge", metric="hamming_loss")
    entry = write_prediction(shared_dir / "entry", DEV, TWO_WRONG)
    report = run_with_plugin(site, entry, challenge, shared_dir)
    assert report["scores"]["main"]["hamming_loss"] == pytest.approx(2 / 6)


def test_without_its_plugin_the_metric_is_refused_at_load(tmp_path: Path) -> None:
    folder = make_table_challenge(tmp_path / "c", metric="hamming_loss")
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.scorer.*unknown table metric"):
        load_challenge(folder)
    assert "hamming_loss" not in table_metrics()


def test_a_plugin_cannot_replace_a_builtin_metric(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path / "site", monkeypatch, PLUGIN_GROUP, "accuracy = toy_table_metric:X")
    assert list(table_metrics().values()) == list(BUILTIN_TABLE_METRICS)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("hamming = toy_table_metric:HAMMING_LOSS", r"metric called 'hamming_loss': name it"),
        ("hamming_loss = toy_table_metric:NOT_A_METRIC", r"must name a TableMetric"),
        ("hamming_loss = no_such_metric_module:M", r"does not load: No module named"),
    ],
)
def test_a_broken_plugin_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str, message: str
) -> None:
    install_plugin(tmp_path / "site", monkeypatch, PLUGIN_GROUP, entry)
    folder = make_table_challenge(tmp_path / "c", metric="accuracy")
    with pytest.raises(ConfigError, match=rf"entry point .*{PLUGIN_GROUP!r}.*{message}"):
        load_challenge(folder)
