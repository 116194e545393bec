"""Hardening item 17: a second built-in task scorer (2017), scored through the pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pipeline_fakes import ScriptedEntry, evaluate

from proctor.errors import ConfigError
from proctor.metrics.physionet_scores import parse_answer_lines, score_2017
from proctor.resolve import load_challenge
from proctor.sandbox.base import Outcome

TRUTH = {"A01": "N", "A02": "A", "A03": "O", "A04": "~", "A05": "N", "A06": "A"}
PUBLIC = {"P01": "N", "P02": "A"}


def make_2017(root: Path) -> Path:
    for folder, records in (("public", PUBLIC), ("hidden", TRUTH)):
        (root / folder).mkdir(parents=True)
        (root / folder / "RECORDS").write_text("".join(f"{r}\n" for r in records))
    (root / "refs").mkdir()
    (root / "refs" / "REFERENCE.csv").write_text("".join(f"{r},{l}\n" for r, l in TRUTH.items()))
    spec = {
        "name": "af2017",
        "title": "AF classification",
        "protocol": {"kind": "records", "output": "{record}.txt",
                     "answers": "answers/{record}.txt", "compare": {"kind": "lines"}},
        "tasks": [{"name": "af", "public_inputs": "public", "hidden_inputs": "hidden",
                   "hidden_references": "refs", "scorer": "physionet2017"}],
        "leaderboard": {"metric": "score"},
        "phases": [{"name": "final", "tasks": ["af"]}],
    }  # fmt: skip
    (root / "challenge.yaml").write_text(yaml.safe_dump(spec))
    return root


def make_answers_entry(root: Path) -> Path:
    (root / "answers").mkdir(parents=True)
    for name in ("setup.sh", "next.sh"):
        (root / name).write_text("#!/bin/sh\n")
        (root / name).chmod(0o755)
    for record, label in PUBLIC.items():
        (root / "answers" / f"{record}.txt").write_text(f"{record},{label}\n")
    return root


class Labeller(ScriptedEntry):
    """Answers each record with ``guess(record)``, or writes nothing for None."""

    def __init__(self, guesses: dict[str, str | None]) -> None:
        super().__init__()
        self.guesses = guesses

    def __call__(self, request: object) -> Outcome:
        argv = request.argv  # type: ignore[attr-defined]
        if argv[0] == "./setup.sh":
            return Outcome(exit_status=0)
        record = argv[-1]
        label = PUBLIC.get(record) or self.guesses.get(record)
        if label is not None:
            request.host_path(f"/entry/{record}.txt").write_text(f"{record},{label}\n")  # type: ignore[attr-defined]
        return Outcome(exit_status=0)


def test_the_2017_score_through_the_pipeline_equals_the_official_formula(tmp_path: Path) -> None:
    guesses: dict[str, str | None] = {"A01": "N", "A02": "N", "A03": "O", "A04": None,
                                      "A05": "N", "A06": "A"}  # fmt: skip
    challenge = make_2017(tmp_path / "challenge")
    report = evaluate(challenge, make_answers_entry(tmp_path / "entry"), Labeller(guesses))
    assert report.status.value == "scored", report.to_json()
    answered = {r: g or "~" for r, g in guesses.items()}
    expected = score_2017(TRUTH, answered)
    scores = report.scores["af"]
    assert scores["score"] == pytest.approx(expected.score)
    assert scores["f1_noisy"] == pytest.approx(expected.f1["~"])
    assert report.to_json()["scores"]["af"]["records_zero_filled"] == 1


def test_an_invalid_label_is_named_during_the_quiz(tmp_path: Path) -> None:
    challenge = make_2017(tmp_path / "challenge")

    class Wrong(Labeller):
        def __call__(self, request: object) -> Outcome:
            argv = request.argv  # type: ignore[attr-defined]
            if argv[0] != "./setup.sh":
                request.host_path(f"/entry/{argv[-1]}.txt").write_text("X\n")  # type: ignore[attr-defined]
            return Outcome(exit_status=0)

    report = evaluate(challenge, make_answers_entry(tmp_path / "entry"), Wrong({}))
    assert "LABEL one of N, A, O, ~" in report.stages[1].message


def test_the_2017_scorer_needs_its_reference_file(tmp_path: Path) -> None:
    from proctor.services.local.catalog import resolve_challenge

    challenge = make_2017(tmp_path / "challenge")
    (challenge / "refs" / "REFERENCE.csv").unlink()
    load_challenge(challenge)  # the names are right
    with pytest.raises(ConfigError, match=r"REFERENCE\.csv"):
        resolve_challenge(str(challenge))
    assert parse_answer_lines("A01,N\n") == {"A01": "N"}
