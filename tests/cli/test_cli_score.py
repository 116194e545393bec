import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from proctor.cli.main import build_app
from proctor.formats.arousal_mat import read_arousal_reference, write_arousal_reference
from proctor.metrics.physionet2018 import ArousalTally

PROCTOR = Path(sys.executable).parent / "proctor"


@pytest.fixture
def challenge_2018(tmp_path: Path) -> tuple[Path, list[Path]]:
    """Two records in the official layout REFDIR/REC/REC-arousal.mat, and their .vec files."""
    refdir = tmp_path / "training"
    rng = np.random.default_rng(3)
    vecs = []
    for name in ("tr03-0005", "tr03-0029"):
        labels = np.zeros(200)
        labels[50:90] = 1
        labels[150:170] = -1
        (refdir / name).mkdir(parents=True)
        write_arousal_reference(refdir / name / f"{name}-arousal.mat", labels)
        pred = np.clip(0.3 * (labels > 0) + rng.random(200) * 0.7, 0, 1)
        vec = tmp_path / f"{name}.vec"
        vec.write_text("".join(f"{p:.3f}\n" for p in pred))
        vecs.append(vec)
    return refdir, vecs


def expected_scores(
    refdir: Path, vecs: list[Path]
) -> tuple[ArousalTally, list[tuple[float, float]]]:
    tally, rows = ArousalTally(), []
    for vec in vecs:
        name = vec.stem
        labels = read_arousal_reference(refdir / name / f"{name}-arousal.mat")
        pred = np.array([float(x) for x in vec.read_text().split()], dtype=np.float32)
        score = tally.add_record(pred, labels)
        rows.append((score.auroc, score.auprc))
    return tally, rows


def test_physionet2018_prints_the_official_table(challenge_2018):
    refdir, vecs = challenge_2018
    result = CliRunner().invoke(
        build_app(), ["score", "physionet2018", "-r", str(refdir), *map(str, vecs)]
    )
    assert result.exit_code == 0, result.output
    tally, rows = expected_scores(refdir, vecs)
    lines = result.output.splitlines()
    assert lines[0] == "Record          AUROC     AUPRC"
    assert lines[1] == lines[-2] == "_" * 31
    assert lines[2] == "%-11s  %8.6f  %8.6f" % ("tr03-0005", *rows[0])  # noqa: UP031 - the official format string, literally
    assert lines[3] == "%-11s  %8.6f  %8.6f" % ("tr03-0029", *rows[1])  # noqa: UP031 - the official format string, literally
    assert lines[-1] == "%-11s  %8.6f  %8.6f" % (  # noqa: UP031 - the official format string, literally
        "Overall",
        tally.gross_auroc(),
        tally.gross_auprc(),
    )


def test_physionet2018_reports_a_bad_record_and_exits_1(challenge_2018, tmp_path):
    refdir, vecs = challenge_2018
    bad = tmp_path / "bad" / "tr03-0029.vec"
    bad.parent.mkdir()
    bad.write_text("0.5\nhello\n")
    result = CliRunner().invoke(
        build_app(), ["score", "physionet2018", "-r", str(refdir), str(vecs[0]), str(bad)]
    )
    assert result.exit_code == 1
    assert "line 2" in result.output
    assert "tr03-0029       error     error" in result.output
    tally, _rows = expected_scores(refdir, vecs[:1])
    assert result.output.splitlines()[-1].endswith(f"{tally.gross_auprc():8.6f}")


def test_physionet2018_warns_about_wrong_lengths_and_prints_json(challenge_2018):
    refdir, vecs = challenge_2018
    vecs[0].write_text(vecs[0].read_text() + "0.100\n")
    result = CliRunner().invoke(
        build_app(), ["score", "physionet2018", "--json", "-r", str(refdir), *map(str, vecs)]
    )
    assert result.exit_code == 0
    assert result.output.startswith(f"Warning: wrong number of samples in {vecs[0]}")
    payload = json.loads(result.output[result.output.index("{") :])
    assert set(payload["records"]) == {"tr03-0005", "tr03-0029"}
    assert 0 <= payload["overall"]["auprc"] <= 1


def test_physionet2017_scores_answers_against_reference(tmp_path):
    (tmp_path / "answers.txt").write_text("A1,N\r\nA2,A\r\nA3,O\r\n")
    (tmp_path / "REFERENCE.csv").write_text("A1,N\nA2,A\nA3,O\nA4,~\n")
    app = build_app()
    args = [
        "score",
        "physionet2017",
        str(tmp_path / "answers.txt"),
        str(tmp_path / "REFERENCE.csv"),
    ]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["score"] == 1.0
    assert payload["f1"]["~"] == 1.0  # the missing A4 counts as "~", which is right here
    text = CliRunner().invoke(app, args).output
    assert "Final F1 score (mean of N, A, O): 1.0000" in text


def test_physionet2017_rejects_a_bad_label_with_exit_2(tmp_path):
    (tmp_path / "answers.txt").write_text("A1,Q\n")
    (tmp_path / "REFERENCE.csv").write_text("A1,N\n")
    result = CliRunner().invoke(
        build_app(),
        ["score", "physionet2017", str(tmp_path / "answers.txt"), str(tmp_path / "REFERENCE.csv")],
    )
    assert result.exit_code == 2
    assert "allowed" in result.output


def write_csv(path: Path, values: list[float]) -> Path:
    path.write_text("label\n" + "".join(f"{v}\n" for v in values))
    return path


def test_auc_reads_a_solution_folder_and_prints_json(tmp_path):
    ref = tmp_path / "ref"
    ref.mkdir()
    write_csv(ref / "test.solution", [0, 0, 1, 1])
    pred = write_csv(tmp_path / "pred.csv", [0.1, 0.4, 0.35, 0.8])
    result = CliRunner().invoke(build_app(), ["score", "auc", str(ref), str(pred), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"auc": 0.75}


@pytest.mark.parametrize(
    ("solution", "prediction", "message"),
    [([0, 1, 1], [0.2, 0.3], "shapes must match"), ([0, 1], [0.2, "x"], "line 3")],
)
def test_auc_refuses_mismatched_or_bad_files(tmp_path, solution, prediction, message):
    sol = write_csv(tmp_path / "test.solution", solution)
    pred = write_csv(tmp_path / "pred.csv", prediction)
    result = CliRunner().invoke(build_app(), ["score", "auc", str(sol), str(pred)])
    assert result.exit_code == 2
    assert message in result.output


def test_auc_needs_exactly_one_solution_in_a_folder(tmp_path):
    write_csv(tmp_path / "a.solution", [0, 1])
    write_csv(tmp_path / "b.solution", [0, 1])
    pred = write_csv(tmp_path / "p.csv", [0.1, 0.9])
    result = CliRunner().invoke(build_app(), ["score", "auc", str(tmp_path), str(pred)])
    assert result.exit_code == 2
    assert "exactly one" in result.output


def test_installed_proctor_command_scores_2018(challenge_2018):
    refdir, vecs = challenge_2018
    done = subprocess.run(
        [str(PROCTOR), "score", "physionet2018", "-r", str(refdir), *map(str, vecs)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("Overall ")


def test_physionet2018_names_files_as_given_and_warns_before_a_bad_value(
    challenge_2018, tmp_path, monkeypatch
):
    refdir, vecs = challenge_2018
    monkeypatch.chdir(vecs[0].parent)
    bad = Path(vecs[1].name)
    bad.write_text("0.500\n1.500\n")
    given = f"./{vecs[0].name}"
    Path(given).write_text(Path(given).read_text() + "0.100\n")
    result = CliRunner().invoke(
        build_app(), ["score", "physionet2018", "-r", str(refdir), given, f".//{bad}"]
    )
    lines = result.output.splitlines()
    assert result.exit_code == 1
    assert lines[2] == f"Warning: wrong number of samples in {given}"
    assert lines[4] == f"Warning: wrong number of samples in .//{bad}"
    assert "line 2: the value 1.5 is outside" in lines[5]
    assert lines[6] == "tr03-0029       error     error"
