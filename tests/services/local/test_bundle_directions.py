"""Column directions of imported bundles: the bundle's where it gives them, else the name's.

A real CodaLab bundle ranks on a `Difference` column without `sort`: it was imported as
higher-is-better. Now a column whose bundle gives no direction and whose name reads as an
error, a loss or a distance is lower-is-better, and a warning names it; a direction the
bundle gives is kept, whatever the name.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from bundle_fixtures import V2_YAML, make_v1_zip, make_v2_bundle
from evalai_challenge import make_evalai_challenge

from proctor.resolve import load_challenge
from proctor.services.local.bundle_import import import_challenge
from proctor.services.local.bundle_import.directions import reads_lower
from proctor.spec import Challenge

V1_COLUMNS = """\
  columns:
    Difference:
      leaderboard: *RESULTS
      label: Difference
      rank: 1
    error:
      leaderboard: *RESULTS
      label: Error
      rank: 2
      sort: desc
    accuracy:
      leaderboard: *RESULTS
      label: Accuracy
      rank: 3
"""


def _directions(challenge: Challenge) -> dict[str, str]:
    scorer = challenge.tasks[0].scorer
    metrics = getattr(scorer, "metrics", {})
    return {name: metric.direction.value for name, metric in metrics.items()}


def test_a_codalab_difference_column_without_sort_ranks_lower_first(tmp_path: Path) -> None:
    archive = make_v1_zip(tmp_path)
    with zipfile.ZipFile(archive) as source:
        files = {name: source.read(name) for name in source.namelist()}
    text = files["competition.yaml"].decode().replace("\r\n", "\n")
    text = text[: text.index("  columns:\n")] + V1_COLUMNS
    files["competition.yaml"] = text.encode()
    with zipfile.ZipFile(archive, "w") as rewritten:
        for name, data in files.items():
            rewritten.writestr(name, data)
    result = import_challenge(archive, tmp_path / "challenge", "host")
    directions = _directions(load_challenge(tmp_path / "challenge"))
    assert directions["Difference"] == "lower"
    assert directions["error"] == "higher"  # the bundle says desc: kept, whatever the name
    assert directions["accuracy"] == "higher"
    (said,) = [w for w in result.warnings if "lower-is-better" in w]
    assert "'Difference'" in said and "no sort" in said and "set sort if higher is better" in said


def test_a_codabench_column_without_sorting_takes_its_direction_from_its_name(
    tmp_path: Path,
) -> None:
    yaml_text = V2_YAML.replace("        sorting: desc\n", "").replace("        sorting: asc\n", "")
    assert "sorting" not in yaml_text
    bundle = make_v2_bundle(tmp_path / "bundle", yaml_text=yaml_text)
    result = import_challenge(bundle, tmp_path / "challenge", "host")
    directions = _directions(load_challenge(tmp_path / "challenge"))
    assert (directions["accuracy"], directions["error"]) == ("higher", "lower")
    (said,) = [w for w in result.warnings if "lower-is-better" in w]
    assert said.startswith("leaderboards[0].columns[1] 'error' / 'Error': the bundle gives no")


def test_an_evalai_label_without_sort_ascending_takes_its_direction_from_its_name(
    tmp_path: Path,
) -> None:
    source = make_evalai_challenge(tmp_path / "source")
    config = source / "challenge_config.yaml"
    given = b'"metadata": {"Errors": {"sort_ascending": True, "description": "wrong labels"}}'
    assert given in config.read_bytes()
    config.write_bytes(config.read_bytes().replace(given, b'"metadata": {}'))
    result = import_challenge(source, tmp_path / "dest", "host")
    challenge = load_challenge(tmp_path / "dest")
    assert _directions(challenge) == {"Accuracy": "higher", "Errors": "lower"}
    said = [w for w in result.warnings if "lower-is-better" in w]
    assert said and "'Errors'" in said[0] and "metadata.Errors.sort_ascending" in said[0]


@pytest.mark.parametrize(
    ("name", "lower"),
    [
        ("Difference", True), ("RMSE", True), ("log_loss", True), ("logLoss", True),
        ("mean-abs-error", True), ("HD95", True), ("Distance (mm)", True), ("err-new", True),
        ("Accuracy", False), ("F1", False), ("AUROC", False), ("Total", False),
        ("errorless_score", False), ("dice", False),
    ],
)  # fmt: skip
def test_names_read_as_errors_losses_or_distances(name: str, lower: bool) -> None:
    assert reads_lower(name) is lower
