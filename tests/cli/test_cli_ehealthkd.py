"""``proctor score ehealthkd``: the official tool's layout, options and output, on hand-made trees.

With PROCTOR_EHEALTHKD_DATA naming the official ehealthkd-2019 repository's ``data/`` folder, the
public baseline is also scored end to end.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path

import pytest
from ehealthkd_trees import write_scenarios as write_trees
from typer.testing import CliRunner

from proctor.cli.main import build_app

SENTENCES = "ab cd ef\n"
GOLD_A = "1\t0 2\tConcept\tab\n2\t3 5\tAction\tcd\n3\t6 8\tConcept\tef\n"
GOLD_B = "target\t2\t1\nsame-as\t1\t3\n"


def write_scenarios(root: Path, a_text: str, b_text: str, *, stem: str) -> None:
    write_trees(root, a_text, b_text, stem=stem, sentences=SENTENCES)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """gold/ plus submissions/ with team1 (s1 perfect, s2 partial) and team2 (s1 empty)."""
    write_scenarios(tmp_path / "gold", GOLD_A, GOLD_B, stem="input")
    subs = tmp_path / "submissions"
    write_scenarios(subs / "team1" / "s1", GOLD_A, GOLD_B, stem="output")
    # one Correct, one Incorrect (id 2 labelled Concept), id 3 missing; relation via id 2 spurious
    write_scenarios(
        subs / "team1" / "s2",
        "1\t0 2\tConcept\tab\n2\t3 5\tConcept\tcd\n",
        "target\t2\t1\n",
        stem="output",
    )
    write_scenarios(subs / "team2" / "s1", "", "", stem="output")
    return tmp_path


@pytest.fixture
def invoke() -> object:
    app = build_app()
    runner = CliRunner()

    def run(*args: str | Path) -> object:
        return runner.invoke(app, ["score", "ehealthkd", *map(str, args)])

    return run


def test_the_command_is_registered_in_the_cli() -> None:
    result = CliRunner().invoke(build_app(), ["score", "--help"])
    assert result.exit_code == 0
    assert "ehealthkd" in result.stdout


def test_json_lists_every_submission_with_official_keys_and_values(tree: Path, invoke) -> None:
    result = invoke(tree / "submissions", tree / "gold")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert sorted(data) == ["team1", "team2"]
    assert [entry["submit"] for entry in data["team1"]] == ["s1", "s2"]
    s2 = data["team1"][1]["scenario1"]
    counts = {k: v for k, v in s2.items() if k[-2:] in ("_A", "_B")}
    assert counts == {
        "correct_A": 1, "incorrect_A": 1, "partial_A": 0, "spurious_A": 0, "missing_A": 1,
        "correct_B": 0, "spurious_B": 1, "missing_B": 2,
    }  # fmt: skip
    # scenario 1: hits 1, recall den 1+1+1+2 = 5, precision den 1+1+1 = 3
    assert (s2["recall"], s2["precision"], s2["submit"]) == (1 / 5, 1 / 3, "s2")
    assert s2["f1"] == 2 * (1 / 5) * (1 / 3) / (1 / 5 + 1 / 3)
    assert data["team1"][0]["scenario3"]["f1"] == 1.0


def test_json_keys_are_sorted_and_pretty_indents(tree: Path, invoke) -> None:
    compact = invoke(tree / "submissions", tree / "gold").stdout
    pretty = invoke(tree / "submissions", tree / "gold", "--pretty").stdout
    assert compact == json.dumps(json.loads(compact), sort_keys=True) + "\n"
    assert pretty == json.dumps(json.loads(compact), sort_keys=True, indent=2) + "\n"


def test_empty_submission_scores_integer_zero(tree: Path, invoke) -> None:
    text = invoke(tree / "submissions", tree / "gold").stdout
    record = json.loads(text)["team2"][0]["scenario2"]
    assert (record["precision"], record["recall"], record["f1"]) == (0, 0, 0)
    assert '"f1": 0,' in text  # an integer 0, as the official tool prints it


def test_best_keeps_the_highest_f1_per_scenario(tree: Path, invoke) -> None:
    data = json.loads(invoke(tree / "submissions", tree / "gold", "--best").stdout)
    assert set(data["team1"]) == {"scenario1", "scenario2", "scenario3"}
    assert {record["submit"] for record in data["team1"].values()} == {"s1"}
    assert data["team2"]["scenario1"]["submit"] == "s1"


def test_single_scores_one_participants_folder_under_its_name(tree: Path, invoke) -> None:
    result = invoke(tree / "submissions" / "team1", tree / "gold", "--single")
    assert result.exit_code == 0, result.output
    assert [e["submit"] for e in json.loads(result.stdout)["team1"]] == ["s1", "s2"]


def test_csv_needs_best(tree: Path, invoke) -> None:
    result = invoke(tree / "submissions", tree / "gold", "--csv")
    assert result.exit_code == 2
    assert "--csv implies --best" in result.output


def test_csv_table_has_a_row_per_scenario_measure_and_a_column_per_participant(
    tree: Path, invoke
) -> None:
    result = invoke(tree / "submissions", tree / "gold", "--best", "--csv")
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == ["", "team1", "team2"]
    names = [row[0] for row in rows[1:] if row]
    assert names[:12] == [
        f"scenario1-{m}"
        for m in (
            "correct_A", "incorrect_A", "partial_A", "spurious_A", "missing_A",
            "correct_B", "spurious_B", "missing_B", "recall", "precision", "f1", "submit",
        )
    ]  # fmt: skip
    assert len(names) == 36
    table = {row[0]: row[1:] for row in rows[1:] if row}
    # a float column prints the integer 0 of an empty submission as 0.0, like pandas
    assert table["scenario1-f1"] == ["1.0", "0.0"]
    assert table["scenario3-correct_A"] == ["3", "0"]


def test_csv_pretty_prints_an_html_table(tree: Path, invoke) -> None:
    html = invoke(tree / "submissions", tree / "gold", "--best", "--csv", "--pretty").stdout
    assert html.startswith('<table border="1" class="dataframe">')
    assert "<th>scenario2-recall</th>\n      <td>1.0</td>\n      <td>0.0</td>" in html


def test_a_malformed_line_fails_naming_file_and_line(tree: Path, invoke) -> None:
    bad = tree / "submissions" / "team1" / "s2" / "scenario1-main" / "output_a_scenario1.txt"
    bad.write_text("1\t0 2\tConcept\tab\n2\t3 5\tConcept\n", encoding="utf-8")
    result = invoke(tree / "submissions", tree / "gold")
    assert result.exit_code == 2
    assert (
        "output_a_scenario1.txt line 2: expected 4 tab-separated fields, found 3" in result.output
    )


def test_a_missing_scenario_file_fails_with_the_expected_layout(tree: Path, invoke) -> None:
    shutil.rmtree(tree / "submissions" / "team2" / "s1" / "scenario2-taskA")
    result = invoke(tree / "submissions", tree / "gold")
    assert result.exit_code == 2
    assert "no output_scenario2.txt" in result.output


def test_a_stray_file_among_submissions_is_refused(tree: Path, invoke) -> None:
    (tree / "submissions" / "notes.txt").write_text("x", encoding="utf-8")
    result = invoke(tree / "submissions", tree / "gold")
    assert result.exit_code == 2
    assert "notes.txt is not a folder" in result.output


def test_dropped_relations_are_reported_on_stderr_not_stdout(tree: Path, invoke) -> None:
    folder = tree / "submissions" / "team2" / "s1" / "scenario1-main"
    (folder / "output_scenario1.txt").write_text("ab cd\nef\n", encoding="utf-8")
    (folder / "output_a_scenario1.txt").write_text(
        "1\t0 2\tConcept\tab\n2\t6 8\tConcept\tef\n", encoding="utf-8"
    )
    (folder / "output_b_scenario1.txt").write_text("is-a\t1\t2\n", encoding="utf-8")
    result = invoke(tree / "submissions", tree / "gold")
    assert result.exit_code == 0
    assert "crosses sentence boundaries" in result.stderr
    assert "warning" not in result.stdout
    json.loads(result.stdout)


OFFICIAL = os.environ.get("PROCTOR_EHEALTHKD_DATA")


@pytest.mark.skipif(
    not OFFICIAL,
    reason="set PROCTOR_EHEALTHKD_DATA to the official ehealthkd-2019 repository's data/ folder",
)
def test_the_public_baseline_reproduces_the_published_figures(tmp_path: Path, invoke) -> None:
    data = Path(str(OFFICIAL))
    shutil.copytree(data / "submissions" / "baseline", tmp_path / "baseline" / "run")
    result = invoke(tmp_path / "baseline", data / "testing", "--single")
    assert result.exit_code == 0, result.output
    entry = json.loads(result.stdout)["baseline"][0]
    assert entry["scenario1"]["f1"] == 0.43091787439613516
    assert entry["scenario1"]["precision"] == 0.5204200700116686
    assert entry["scenario1"]["recall"] == 0.3676834295136026
    assert entry["scenario2"]["f1"] == 0.5466377440347071
    assert entry["scenario3"]["f1"] == 0.12307692307692308
