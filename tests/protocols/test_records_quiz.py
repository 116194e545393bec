"""The records protocol's quiz: which answers an entry ships, and the quiz without any.

The ``answers`` default follows ``output``; ``answers: none`` runs the quiz with the scorer's
output check only. Run through the real sandbox on the toy records challenge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from toy_challenge import GOOD_NEXT, PUBLIC, good_answer, make_challenge, make_entry

from proctor.pipeline.report import EvaluationReport, RunStatus
from proctor.protocols.records import RecordsProtocol
from proctor.services.local.evaluate import RunRequest, run_entry
from proctor.settings import Settings

FORECAST_NEXT = GOOD_NEXT.replace(".vec", ".forecast")


@pytest.mark.parametrize(
    ("output", "answers"),
    [
        ("{record}.forecast", "answers/{record}.forecast"),
        ("{record}.vec", "answers/{record}.vec"),
        ("out/{record}.txt", "answers/out/{record}.txt"),
        ("answers.txt", "answers.txt"),
    ],
)
def test_the_answers_default_follows_the_output(output: str, answers: str) -> None:
    protocol = RecordsProtocol.model_validate({"kind": "records", "output": output})
    assert protocol.answers == answers


def test_the_answers_default_without_an_output_is_the_vec_of_2018() -> None:
    assert RecordsProtocol.model_validate({"kind": "records"}).answers == "answers/{record}.vec"


@pytest.mark.parametrize("value", ["none", "None", None])
def test_answers_none_switches_the_comparison_off(value: str | None) -> None:
    protocol = RecordsProtocol.model_validate(
        {"kind": "records", "output": "{record}.forecast", "answers": value}
    )
    assert protocol.answers is None


def test_answers_set_by_the_organizer_are_kept() -> None:
    protocol = RecordsProtocol.model_validate(
        {"kind": "records", "output": "{record}.forecast", "answers": "expected/{record}.vec"}
    )
    assert protocol.answers == "expected/{record}.vec"


@pytest.fixture
def settings(shared_dir: Path) -> Settings:
    return Settings(work_root=shared_dir / "runs")


def _challenge(root: Path, **protocol: Any) -> Path:
    folder = make_challenge(root)
    spec = yaml.safe_load((folder / "challenge.yaml").read_text())
    spec["protocol"].update(protocol)
    (folder / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return folder


def _quiz(report: EvaluationReport) -> dict[str, Any]:
    return next(s for s in report.to_json()["stages"] if s["name"] == "quiz")


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_forecast_output_is_compared_with_the_shipped_forecast_answers(
    tmp_path: Path, settings: Settings
) -> None:
    challenge = _challenge(tmp_path / "challenge", output="{record}.forecast")
    entry = make_entry(tmp_path / "entry", next_sh=FORECAST_NEXT, answers=False)
    (entry / "answers").mkdir()
    for record in PUBLIC:
        (entry / "answers" / f"{record}.forecast").write_text(good_answer())
    report = run_entry(RunRequest(entry, str(challenge), jobs=2), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert "matched the shipped answers" in _quiz(report)["message"]
    assert report.scores["arousal"]["auprc"] == pytest.approx(1.0)


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_forecast_entry_missing_its_answers_is_told_the_forecast_name(
    tmp_path: Path, settings: Settings
) -> None:
    challenge = _challenge(tmp_path / "challenge", output="{record}.forecast")
    entry = make_entry(tmp_path / "entry", next_sh=FORECAST_NEXT)  # ships answers/*.vec
    report = run_entry(RunRequest(entry, str(challenge), jobs=2), settings)
    assert report.status is RunStatus.FAILED
    assert "answers/tr01.forecast" in _quiz(report)["message"]


@pytest.mark.sandbox
@pytest.mark.slow
def test_answers_none_runs_the_quiz_without_shipped_answers(
    tmp_path: Path, settings: Settings
) -> None:
    challenge = _challenge(tmp_path / "challenge", output="{record}.forecast", answers="none")
    entry = make_entry(tmp_path / "entry", next_sh=FORECAST_NEXT, answers=False)
    report = run_entry(RunRequest(entry, str(challenge), jobs=2), settings)
    assert report.status is RunStatus.SCORED, report.to_json()
    assert _quiz(report)["message"] == f"{len(PUBLIC)} records gave usable output"


@pytest.mark.sandbox
@pytest.mark.slow
def test_answers_none_still_checks_each_output(tmp_path: Path, settings: Settings) -> None:
    challenge = _challenge(tmp_path / "challenge", output="{record}.forecast", answers="none")
    broken = '#!/bin/sh\necho "not a number" > "$1.forecast"\n'
    entry = make_entry(tmp_path / "entry", next_sh=broken, answers=False)
    report = run_entry(RunRequest(entry, str(challenge), jobs=2), settings)
    assert report.status is RunStatus.FAILED
    assert report.failed_stage == "quiz"
    message = _quiz(report)["message"]
    assert ".forecast" in message and "not a number" in message, message
