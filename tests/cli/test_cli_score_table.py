"""``proctor score table``: rows matched by id, every metric equal to scikit-learn on the matched
arrays, and every bad input an exit 2 naming the file, the line and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import sklearn.metrics as skm
from scipy import stats
from typer.testing import CliRunner

from proctor.cli.main import build_app

RNG = np.random.default_rng(7)
N = 60
IDS = [f"r{i:03d}" for i in range(N)]
SHUFFLED = list(RNG.permutation(N))


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), ["score", "table", *args])
    return result.exit_code, result.output


def write(path: Path, header: str, rows: list[str]) -> Path:
    path.write_text(header + "\n" + "".join(row + "\n" for row in rows))
    return path


def score(solution: Path, prediction: Path, metric: str, *extra: str) -> float:
    code, out = run(str(solution), str(prediction), "--metric", metric, "--json", *extra)
    assert code == 0, out
    shown = json.loads(out)
    assert (shown["metric"], shown["rows"]) == (metric, N)
    return float(shown["value"])


@pytest.fixture
def labels(tmp_path: Path) -> tuple[Path, Path, list[int], list[int]]:
    truth = RNG.integers(0, 4, N).tolist()
    pred = [t if RNG.random() < 0.6 else int(RNG.integers(0, 4)) for t in truth]
    solution = write(
        tmp_path / "s.csv", "id,target", [f"{i},{t}" for i, t in zip(IDS, truth, strict=True)]
    )
    rows = [f"{IDS[i]},{pred[i]}.0" for i in SHUFFLED]  # other order; 1.0 is the label 1
    return solution, write(tmp_path / "p.csv", "id,target", rows), truth, pred


LABELS = {
    "accuracy": skm.accuracy_score,
    "balanced_accuracy": skm.balanced_accuracy_score,
    "f1_macro": lambda t, p: skm.f1_score(t, p, average="macro"),
    "f1_micro": lambda t, p: skm.f1_score(t, p, average="micro"),
    "f1_weighted": lambda t, p: skm.f1_score(t, p, average="weighted"),
    "precision_macro": lambda t, p: skm.precision_score(t, p, average="macro", zero_division=0),
    "recall_macro": lambda t, p: skm.recall_score(t, p, average="macro", zero_division=0),
    "cohen_kappa": skm.cohen_kappa_score,
    "quadratic_weighted_kappa": lambda t, p: skm.cohen_kappa_score(t, p, weights="quadratic"),
    "mcc": skm.matthews_corrcoef,
}


@pytest.mark.parametrize("metric", sorted(LABELS))
def test_label_metrics_match_rows_by_id_and_equal_scikit_learn(
    metric: str, labels: tuple[Path, Path, list[int], list[int]]
) -> None:
    solution, prediction, truth, pred = labels
    assert score(solution, prediction, metric) == pytest.approx(LABELS[metric](truth, pred))


VALUES = {
    "rmse": skm.root_mean_squared_error,
    "mae": skm.mean_absolute_error,
    "r2": skm.r2_score,
    "mape": skm.mean_absolute_percentage_error,
    "rmsle": skm.root_mean_squared_log_error,
    "pearson": lambda t, p: stats.pearsonr(t, p).statistic,
    "spearman": lambda t, p: stats.spearmanr(t, p).statistic,
}


@pytest.mark.parametrize("metric", sorted(VALUES))
def test_value_metrics_equal_scikit_learn_and_scipy(metric: str, tmp_path: Path) -> None:
    truth, pred = RNG.random(N) * 10, RNG.random(N) * 10
    solution = write(
        tmp_path / "s.csv", "id,y", [f"{i},{float(t)!r}" for i, t in zip(IDS, truth, strict=True)]
    )
    prediction = write(
        tmp_path / "p.csv", "id,y", [f"{IDS[i]},{float(pred[i])!r}" for i in SHUFFLED]
    )
    value = score(solution, prediction, metric, "--target", "y")
    assert value == pytest.approx(VALUES[metric](truth, pred), rel=1e-12)


@pytest.fixture
def binary(tmp_path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    truth = np.array(["yes" if x else "no" for x in RNG.integers(0, 2, N)])
    scores = np.round(RNG.random(N), 2)  # ties
    solution = write(
        tmp_path / "s.csv", "id,target", [f"{i},{t}" for i, t in zip(IDS, truth, strict=True)]
    )
    return solution, truth, scores


@pytest.mark.parametrize(
    ("metric", "theirs"),
    [
        ("roc_auc", skm.roc_auc_score),
        ("average_precision", skm.average_precision_score),
        ("log_loss", skm.log_loss),
    ],
)
def test_one_score_column_is_the_positive_class_greater_label_by_default(
    metric: str, theirs: object, binary: tuple[Path, np.ndarray, np.ndarray], tmp_path: Path
) -> None:
    solution, truth, scores = binary
    rows = [f"{IDS[i]},{scores[i]}" for i in SHUFFLED]
    prediction = write(tmp_path / "p.csv", "id,score", rows)
    assert callable(theirs)
    expected = theirs(truth == "yes", scores)
    assert score(solution, prediction, metric) == pytest.approx(expected, rel=1e-12)
    flipped = theirs(truth == "no", scores)
    assert score(solution, prediction, metric, "--positive", "no") == pytest.approx(flipped)


def test_class_probability_columns_give_one_vs_rest_roc_auc_and_log_loss(tmp_path: Path) -> None:
    truth = np.array(["a", "b", "c"] * (N // 3))
    raw = RNG.random((N, 3))
    prob = raw / raw.sum(axis=1, keepdims=True)
    solution = write(
        tmp_path / "s.csv", "id,target", [f"{i},{t}" for i, t in zip(IDS, truth, strict=True)]
    )
    rows = [
        f"{IDS[i]},{float(prob[i, 2])!r},{float(prob[i, 0])!r},{float(prob[i, 1])!r}"
        for i in SHUFFLED
    ]
    prediction = write(tmp_path / "p.csv", "id,c,a,b", rows)
    auc = skm.roc_auc_score(truth, prob, multi_class="ovr", average="macro")
    assert score(solution, prediction, "roc_auc") == pytest.approx(auc, rel=1e-12)
    loss = skm.log_loss(truth, prob)
    assert score(solution, prediction, "log_loss") == pytest.approx(loss, rel=1e-12)
    ap = skm.average_precision_score(truth, prob)
    assert score(solution, prediction, "average_precision") == pytest.approx(ap, rel=1e-12)


def test_map_at_k_reads_space_separated_items(tmp_path: Path) -> None:
    solution = write(tmp_path / "s.csv", "id,target", [f"{i},a b" for i in IDS])
    prediction = write(tmp_path / "p.csv", "id,target", [f"{i},b c a" for i in IDS])
    assert score(solution, prediction, "map_at_k", "--k", "3") == pytest.approx((1 + 2 / 3) / 2)


def test_quoted_fields_are_read_with_the_csv_module(tmp_path: Path) -> None:
    solution = write(tmp_path / "s.csv", "id,target", [f'"{i}, x",{i[-1]}' for i in IDS])
    prediction = write(tmp_path / "p.csv", "id,target", [f'"{i}, x",{i[-1]}' for i in IDS])
    assert score(solution, prediction, "accuracy") == 1.0


@pytest.mark.parametrize(
    ("prediction_rows", "expected"),
    [
        (["r000,1", "r001,1", "r001,0"], "p.csv, line 4: id 'r001' repeats line 3"),
        (["r000,1", "r001,1"], "p.csv: no row for id 'r002'"),
        (["r000,1", "r001,1", "r002,1", "r009,1"], "p.csv, line 5: id 'r009' is not an id"),
        (["r000,1", "r001,nan", "r002,1"], "p.csv, line 3: 'nan' in column 'target'"),
        (["r000,1", "r001,0.5x", "r002,1"], "p.csv, line 3: '0.5x' in column 'target' is not"),
        (["r000,1", "r001,1,2", "r002,1"], "p.csv, line 3: 3 fields where the header has 2"),
    ],
)
def test_bad_predictions_exit_2_naming_file_line_and_fix(
    prediction_rows: list[str], expected: str, tmp_path: Path
) -> None:
    solution = write(tmp_path / "s.csv", "id,target", ["r000,1", "r001,0", "r002,1"])
    prediction = write(tmp_path / "p.csv", "id,target", prediction_rows)
    code, out = run(str(solution), str(prediction), "--metric", "rmse")
    assert code == 2
    assert expected in out


def test_a_missing_column_names_the_option_that_fixes_it(tmp_path: Path) -> None:
    solution = write(tmp_path / "s.csv", "id,label", ["r000,1", "r001,0"])
    code, out = run(str(solution), str(solution), "--metric", "accuracy")
    assert code == 2
    assert "s.csv: no column 'target' in the header (id, label)" in out
    assert "target option" in out


def test_a_non_numeric_probability_column_is_refused_with_its_line(tmp_path: Path) -> None:
    solution = write(tmp_path / "s.csv", "id,target", ["r000,1", "r001,0"])
    prediction = write(tmp_path / "p.csv", "id,score", ["r000,high", "r001,0.1"])
    code, out = run(str(solution), str(prediction), "--metric", "roc_auc")
    assert code == 2
    assert "p.csv, line 2: 'high' in column 'score' is not a number" in out


def test_an_option_the_metric_does_not_take_is_a_usage_error(tmp_path: Path) -> None:
    solution = write(tmp_path / "s.csv", "id,target", ["r000,1", "r001,0"])
    code, out = run(str(solution), str(solution), "--metric", "accuracy", "--k", "3")
    assert code == 2
    assert "k applies to map_at_k only" in out


def test_an_empty_or_absent_file_exits_2_naming_it(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("id,target\n")
    code, out = run(str(empty), str(empty), "--metric", "accuracy")
    assert (code, "empty.csv: no rows below the header" in out) == (2, True)
    code, out = run(str(tmp_path / "absent.csv"), str(empty), "--metric", "accuracy")
    assert (code, "absent.csv: cannot read the file" in out) == (2, True)
