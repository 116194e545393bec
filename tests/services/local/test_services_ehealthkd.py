"""``services.local.ehealthkd``: the eHealth-KD 2019 use case, its warnings and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from ehealthkd_trees import FOLDERS
from ehealthkd_trees import write_scenarios as write_trees

from proctor.errors import InputFileError, UsageError
from proctor.services.local.ehealthkd import best_per_scenario, score_participants

SENTENCES = "ab cd\nef\n"
GOLD_A = "1\t0 2\tConcept\tab\n2\t3 5\tAction\tcd\n3\t6 8\tConcept\tef\n"
GOLD_B = "target\t2\t1\n"


def write_scenarios(root: Path, a_text: str, b_text: str, *, stem: str) -> None:
    write_trees(root, a_text, b_text, stem=stem, sentences=SENTENCES)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """gold/ and one participant with a perfect and an empty submission."""
    write_scenarios(tmp_path / "gold", GOLD_A, GOLD_B, stem="input")
    write_scenarios(tmp_path / "subs" / "team" / "perfect", GOLD_A, GOLD_B, stem="output")
    write_scenarios(tmp_path / "subs" / "team" / "empty", "", "", stem="output")
    return tmp_path


def test_every_submission_is_scored_in_name_order(tree: Path) -> None:
    scored = score_participants(tree / "subs", tree / "gold", single=False)
    assert [entry["submit"] for entry in scored.submissions["team"]] == ["empty", "perfect"]
    assert scored.warnings == ()
    best = best_per_scenario(scored.submissions)
    assert {record["submit"] for record in best["team"].values()} == {"perfect"}


def test_single_scores_one_participants_folder_under_its_name(tree: Path) -> None:
    scored = score_participants(tree / "subs" / "team", tree / "gold", single=True)
    assert list(scored.submissions) == ["team"]


def test_a_dropped_relation_is_returned_as_one_warning_not_raised(tree: Path) -> None:
    folder = tree / "subs" / "team" / "empty"
    for number, scenario in FOLDERS.items():
        (folder / scenario / f"output_a_scenario{number}.txt").write_text(
            "1\t0 2\tConcept\tab\n2\t6 8\tConcept\tef\n", encoding="utf-8"
        )
        (folder / scenario / f"output_b_scenario{number}.txt").write_text(
            "is-a\t1\t2\n", encoding="utf-8"
        )
    scored = score_participants(tree / "subs", tree / "gold", single=False)
    assert len(scored.warnings) == len(set(scored.warnings)) >= 1
    assert all("crosses sentence boundaries" in message for message in scored.warnings)


def test_a_malformed_line_is_an_input_file_error_naming_file_and_line(tree: Path) -> None:
    bad = tree / "subs" / "team" / "empty" / "scenario1-main" / "output_a_scenario1.txt"
    bad.write_text("1\t0 2\tConcept\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"output_a_scenario1\.txt line 1: expected 4"):
        score_participants(tree / "subs", tree / "gold", single=False)


def test_a_missing_folder_is_a_usage_error(tree: Path) -> None:
    with pytest.raises(UsageError, match=r"SUBMISSIONS .* is not a folder"):
        score_participants(tree / "nothing", tree / "gold", single=False)
